package sync

import (
	"fmt"
	"strings"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// Trust modes (git config ctx.trust).
const (
	TrustTOFU      = "tofu"      // accept a device's key the first time it is seen, then pin it
	TrustAllowlist = "allowlist" // accept only devices named in ctx.trustedDevice
)

// Policy decides which devices' records may be merged.
type Policy struct {
	Mode      string
	Trusted   map[string]bool // ctx.trustedDevice
	Untrusted map[string]bool // ctx.untrustedDevice: never merged
	// RepoID is the repository id this clone derives, used by a pull only
	// when neither branch fixes one in its REPO file ("" = no check).
	RepoID string
	// repos: the repository ids a merge takes records from (set by
	// makePlan; nil = every id).
	repos map[string]bool
}

// LoadPolicy reads ctx.trust, ctx.trustedDevice and ctx.untrustedDevice.
func LoadPolicy(r *gitrepo.Repo) (Policy, error) {
	p := Policy{Mode: strings.ToLower(strings.TrimSpace(r.Config("ctx.trust"))), Trusted: map[string]bool{}, Untrusted: map[string]bool{}}
	if p.Mode == "" {
		p.Mode = TrustTOFU
	}
	if p.Mode != TrustTOFU && p.Mode != TrustAllowlist {
		return p, fmt.Errorf("git config ctx.trust is %q: use %s or %s", p.Mode, TrustTOFU, TrustAllowlist)
	}
	for _, d := range r.ConfigAll("ctx.trustedDevice") {
		p.Trusted[strings.TrimSpace(d)] = true
	}
	for _, d := range r.ConfigAll("ctx.untrustedDevice") {
		p.Untrusted[strings.TrimSpace(d)] = true
	}
	return p, nil
}

// Allows reports whether records of device may be merged, and why not.
func (p Policy) Allows(device string) (bool, string) {
	if p.Untrusted[device] {
		return false, "device is untrusted (git ctx devices trust " + device + " to accept it)"
	}
	if p.Mode == TrustAllowlist && !p.Trusted[device] {
		return false, "device is not in the allowlist (git ctx devices trust " + device + ")"
	}
	return true, ""
}

// Label is the trust state shown by `git ctx devices`.
func (p Policy) Label(device string, pinned bool) string {
	switch {
	case p.Untrusted[device]:
		return "untrusted"
	case p.Trusted[device]:
		return "trusted"
	case p.Mode == TrustAllowlist:
		return "not allowed"
	case pinned:
		return "pinned"
	}
	return "new"
}
