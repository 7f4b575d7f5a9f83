package sync

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// DeviceInfo describes one device for `git ctx devices`.
type DeviceInfo struct {
	ID          string
	Fingerprint string
	Trust       string
	This        bool
	Checkpoints int
	Unverified  int
	LastSeen    int64 // ts of its newest checkpoint (unix ns), 0 if none
	// SameKeyAs lists the other device ids on the branch that publish the
	// very same public key (sorted; empty for almost every device): a
	// copied key, or a device set up again under a new id.
	SameKeyAs []string
}

// Devices lists every device with a key on the local branch, plus devices
// named in the trust configuration.
func Devices(ctx context.Context, m *workspace.Workspace) ([]DeviceInfo, error) {
	pol, err := LoadPolicy(m.Repo)
	if err != nil {
		return nil, err
	}
	repoID, err := m.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	id, err := m.Identity()
	if err != nil {
		return nil, err
	}
	v, err := m.Store.View()
	if err != nil {
		return nil, err
	}
	db, err := m.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	stats, err := db.DeviceStats(ctx, repoID)
	if err != nil {
		return nil, err
	}
	ids, err := v.Devices()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []DeviceInfo
	holders := map[string][]string{} // fingerprint → ids
	for _, d := range ids {
		seen[d] = true
		info := DeviceInfo{ID: d, This: d == id.DeviceID, SameKeyAs: []string{}}
		if pub, _, err := v.DeviceKey(d); err == nil {
			info.Fingerprint = checkpoint.Fingerprint(pub)
			holders[info.Fingerprint] = append(holders[info.Fingerprint], d)
		}
		info.Trust = pol.Label(d, true)
		s := stats[d]
		info.Checkpoints, info.Unverified, info.LastSeen = s.Count, s.Count-s.Verified, s.LastSeen
		out = append(out, info)
	}
	for i := range out {
		for _, other := range holders[out[i].Fingerprint] {
			if other != out[i].ID {
				out[i].SameKeyAs = append(out[i].SameKeyAs, other)
			}
		}
		sort.Strings(out[i].SameKeyAs)
	}
	for d := range pol.Trusted {
		if !seen[d] {
			out = append(out, DeviceInfo{ID: d, Trust: "trusted", SameKeyAs: []string{}})
			seen[d] = true
		}
	}
	for d := range pol.Untrusted {
		if !seen[d] {
			out = append(out, DeviceInfo{ID: d, Trust: "untrusted", SameKeyAs: []string{}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SetTrust records a trust decision in the repository's git config:
// trusting adds the id to ctx.trustedDevice and drops it from
// ctx.untrustedDevice; untrusting does the reverse.
//
// Trusting an id this clone has never seen (no key on the memory branch or
// on a fetched remote memory branch, nothing of it in quarantine) is refused
// with ErrUnknownDevice unless force: a mistyped id would otherwise be
// trusted silently while the real device stays refused.
func SetTrust(ctx context.Context, m *workspace.Workspace, device string, trusted, force bool) error {
	if device == "" || strings.ContainsAny(device, "/\\\x00\n") {
		return fmt.Errorf("%w: %q is not a device id", workspace.ErrInput, device)
	}
	if trusted && !force {
		known, err := knownDevice(ctx, m, device)
		if err != nil {
			return err
		}
		if !known {
			return fmt.Errorf("%w: no device %q on the memory branch, on a fetched remote memory branch or among rejected records: "+
				"check the id ('git ctx devices'), run 'git ctx pull' first, or pass --force to trust it before it is seen", ErrUnknownDevice, device)
		}
	}
	add, drop := "ctx.trustedDevice", "ctx.untrustedDevice"
	if !trusted {
		add, drop = drop, add
	}
	for _, v := range m.Repo.ConfigAll(add) {
		if v == device {
			add = ""
		}
	}
	if add != "" {
		if err := m.Repo.AddConfig(ctx, add, device); err != nil {
			return err
		}
	}
	return m.Repo.UnsetConfig(ctx, drop, device)
}

// ErrUnknownDevice: a device id this clone has never seen.
var ErrUnknownDevice = fault.Sentinel(fault.Failed, "unknown device")

// knownDevice reports whether device has a key on the local memory branch
// or on any fetched remote memory branch, or records in the quarantine.
func knownDevice(ctx context.Context, m *workspace.Workspace, device string) (bool, error) {
	refs := []string{"refs/heads/ghyll/memory"}
	for _, r := range m.Repo.Remotes() {
		refs = append(refs, TrackingRef(r))
	}
	for _, ref := range refs {
		tip, err := m.Store.ResolveRef(ref)
		if err != nil || tip.IsZero() {
			continue
		}
		v, err := m.Store.ViewAt(tip)
		if err != nil {
			continue
		}
		if _, _, err := v.DeviceKey(device); err == nil {
			return true, nil
		}
	}
	repoID, err := m.RepoID(ctx)
	if err != nil {
		return false, err
	}
	db, err := m.Cache(ctx)
	if err != nil {
		return false, err
	}
	defer db.Close()
	q, err := db.Quarantine(ctx, repoID)
	if err != nil {
		return false, err
	}
	for _, e := range q {
		if e.Device == device {
			return true, nil
		}
	}
	return false, nil
}
