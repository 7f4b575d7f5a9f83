// Package redact finds secrets in plain text and replaces them with a
// marker before the text is hashed, signed or written to the memory branch.
//
// It recognises:
//
//   - private-key: PEM blocks "-----BEGIN ... PRIVATE KEY-----" (RSA, EC,
//     DSA, OPENSSH, ENCRYPTED, PGP ... PRIVATE KEY BLOCK) through the matching
//     END line; a BEGIN line with no END redacts to the end of the string.
//     The header must be followed by key material (a base64 run or a PEM
//     header such as "Proc-Type:"), so code that merely mentions the header
//     string is left alone.
//   - aws-access-key: AKIA/ASIA/AGPA/AIDA/AROA/ANPA/ANVA/AIPA followed by
//     exactly 16 upper-case letters or digits.
//   - aws-secret-key: a 40-character base64 value assigned to a name ending
//     in secret_access_key (aws_secret_access_key, AWS_SECRET_ACCESS_KEY,
//     SecretAccessKey, ...).
//   - github-token: ghp_/gho_/ghu_/ghs_/ghr_ + 36 or more letters/digits, and
//     github_pat_ + 22 or more [A-Za-z0-9_].
//   - gitlab-token: glpat- + 20 or more [A-Za-z0-9_-].
//   - slack-token: xoxb-/xoxa-/xoxp-/xoxr-/xoxs-/xoxe- followed by a digit
//     and at least 10 [A-Za-z0-9-] in all.
//   - slack-webhook: https://hooks.slack.com/services/... (also workflows/
//     and triggers/).
//   - stripe-key: secret and restricted keys sk_live_, sk_test_, rk_live_,
//     rk_test_ (publishable pk_ keys are not secrets and are kept).
//   - google-api-key: AIza + exactly 35 [A-Za-z0-9_-].
//   - anthropic-key: sk-ant- + 20 or more [A-Za-z0-9_-].
//   - openai-key: sk-proj-/sk-svcacct-/sk-admin- keys, and sk- followed by 20
//     or more letters and digits mixing upper case, lower case and digits.
//     sk- glued to a preceding word ("task-sk-...") is not a key.
//   - jwt: three base64url segments, the first starting with eyJ, each at
//     least 10 characters long.
//   - npm-token: npm_ + 36 or more letters/digits.
//   - credential-url: the non-empty password of scheme://user:password@host;
//     only the password is replaced, the scheme, user and host are kept.
//   - secret-assignment: the value (never the name) of an assignment to a
//     secret-looking name such as password, passwd, pwd, secret, token,
//     api_key, access_key, private_key, client_secret, auth, credentials
//     with =, :, := or =>. The value must be a single token without spaces,
//     parentheses, brackets, braces, $ or <, and either look random (at
//     least 12 characters, Shannon entropy of at least 3.5 bits per
//     character, at least one digit, not an identifier, dotted path, file
//     path or URL) or, for password-like names, be a literal (quoted,
//     NAME=value environment style or --flag=value) of at least 8
//     characters that is not an obvious placeholder.
//
// Every finding is replaced by "[REDACTED:<kind>]". When two findings
// overlap, the longer one wins, and among equally long ones the more
// specific kind wins (the order above), so nothing is redacted twice.
// Markers already present in the input are never rescanned, which makes
// String idempotent.
//
// All detectors are hand-written scanners (no regular expressions) that
// look at each byte of the input a bounded number of times, so the running
// time is linear in the length of the input: a few tens of milliseconds per
// megabyte. The one bounded exception is assignment values, each scanned
// for at most 1 KiB, so text made of nothing but `password:"` repeated costs
// about a hundred steps per byte at worst and stays linear. There is no input
// size limit; memory use is a small multiple of the input size.
package redact

import (
	"sort"
	"strings"
)

// Result is the outcome of scanning one string.
type Result struct {
	Text  string   // the input with every finding replaced by "[REDACTED:<kind>]"
	Count int      // number of replacements
	Kinds []string // distinct kinds found, sorted
}

// Kind names, in order of precedence (most specific first).
const (
	kindPrivateKey       = "private-key"
	kindAWSAccessKey     = "aws-access-key"
	kindAWSSecretKey     = "aws-secret-key"
	kindGitHubToken      = "github-token"
	kindGitLabToken      = "gitlab-token"
	kindSlackToken       = "slack-token"
	kindSlackWebhook     = "slack-webhook"
	kindStripeKey        = "stripe-key"
	kindGoogleAPIKey     = "google-api-key"
	kindAnthropicKey     = "anthropic-key"
	kindOpenAIKey        = "openai-key"
	kindJWT              = "jwt"
	kindNPMToken         = "npm-token"
	kindCredentialURL    = "credential-url"
	kindSecretAssignment = "secret-assignment"
)

// allKinds lists every kind this package can report, most specific first.
var allKinds = []string{
	kindPrivateKey, kindAWSAccessKey, kindAWSSecretKey, kindGitHubToken,
	kindGitLabToken, kindSlackToken, kindSlackWebhook, kindStripeKey,
	kindGoogleAPIKey, kindAnthropicKey, kindOpenAIKey, kindJWT, kindNPMToken,
	kindCredentialURL, kindSecretAssignment,
}

var kindPriority = func() map[string]int {
	m := make(map[string]int, len(allKinds))
	for i, k := range allKinds {
		m[k] = i
	}
	return m
}()

const (
	markerPrefix = "[REDACTED:"
	markerSuffix = "]"
)

// marker returns the replacement text for a finding of the given kind.
func marker(kind string) string { return markerPrefix + kind + markerSuffix }

// String scans s and returns the redacted text. It never panics, is
// deterministic, and is idempotent: String(String(s).Text).Count == 0.
//
// Scanning repeats until a pass finds nothing (a replacement can, in rare
// contrived inputs, expose a new token boundary); in practice one pass
// does all the work and the second confirms it.
func String(s string) Result {
	res := Result{Text: s}
	var kinds map[string]bool
	for {
		text, found := scanOnce(res.Text)
		if len(found) == 0 {
			break
		}
		res.Text = text
		res.Count += len(found)
		if kinds == nil {
			kinds = make(map[string]bool)
		}
		for _, f := range found {
			kinds[f.kind] = true
		}
	}
	res.Kinds = sortedKinds(kinds)
	return res
}

// Strings redacts each element of a list (nil stays nil) and merges the
// results' counts and kinds. The merged Result's Text is empty; the
// redacted elements are returned in the slice.
func Strings(list []string) ([]string, Result) {
	if list == nil {
		return nil, Result{}
	}
	out := make([]string, len(list))
	var merged Result
	var kinds map[string]bool
	for i, s := range list {
		r := String(s)
		out[i] = r.Text
		merged.Count += r.Count
		for _, k := range r.Kinds {
			if kinds == nil {
				kinds = make(map[string]bool)
			}
			kinds[k] = true
		}
	}
	merged.Kinds = sortedKinds(kinds)
	return out, merged
}

func sortedKinds(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	ks := make([]string, 0, len(set))
	for k := range set {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// finding is a candidate replacement of s[start:end].
type finding struct {
	start, end int
	kind       string
}

type collector struct {
	found []finding
}

func (c *collector) add(start, end int, kind string) {
	if start < end {
		c.found = append(c.found, finding{start, end, kind})
	}
}

// scanOnce runs every detector over s, resolves overlaps and returns the
// rewritten text together with the findings that were replaced.
func scanOnce(s string) (string, []finding) {
	var c collector
	scanPrivateKeys(s, &c)
	scanTokens(s, &c)
	scanJWTs(s, &c)
	scanSlackWebhooks(s, &c)
	scanCredentialURLs(s, &c)
	scanAssignments(s, &c)
	if len(c.found) == 0 {
		return s, nil
	}
	accepted := resolve(s, c.found)
	if len(accepted) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range accepted {
		b.WriteString(s[last:f.start])
		b.WriteString(marker(f.kind))
		last = f.end
	}
	b.WriteString(s[last:])
	return b.String(), accepted
}

// resolve picks a set of non-overlapping findings that do not touch any
// marker already present in s: longer findings first, then more specific
// kinds, then earlier ones. The result is sorted by position.
func resolve(s string, found []finding) []finding {
	occupied := make([]bool, len(s))
	for _, m := range existingMarkers(s) {
		for i := m[0]; i < m[1]; i++ {
			occupied[i] = true
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if la, lb := a.end-a.start, b.end-b.start; la != lb {
			return la > lb
		}
		if pa, pb := kindPriority[a.kind], kindPriority[b.kind]; pa != pb {
			return pa < pb
		}
		return a.start < b.start
	})
	var accepted []finding
next:
	for _, f := range found {
		for i := f.start; i < f.end; i++ {
			if occupied[i] {
				continue next
			}
		}
		for i := f.start; i < f.end; i++ {
			occupied[i] = true
		}
		accepted = append(accepted, f)
	}
	sort.Slice(accepted, func(i, j int) bool { return accepted[i].start < accepted[j].start })
	return accepted
}

// existingMarkers returns the spans of "[REDACTED:<kind>]" markers in s,
// where <kind> is 1 to 40 characters of [a-z-].
func existingMarkers(s string) [][2]int {
	var spans [][2]int
	from := 0
	for {
		i := strings.Index(s[from:], markerPrefix)
		if i < 0 {
			return spans
		}
		p := from + i
		j := p + len(markerPrefix)
		k := j
		for k < len(s) && k-j <= 40 && (s[k] >= 'a' && s[k] <= 'z' || s[k] == '-') {
			k++
		}
		if k > j && k-j <= 40 && k < len(s) && s[k] == ']' {
			spans = append(spans, [2]int{p, k + 1})
			from = k + 1
			continue
		}
		from = p + 1
	}
}
