package redact

import (
	"sort"
	"strings"
)

// charClass is a set of bytes.
type charClass [256]bool

// newClass builds a class from a spec such as "A-Za-z0-9_-" (a trailing or
// leading '-' is literal).
func newClass(spec string) *charClass {
	var c charClass
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for b := int(spec[i]); b <= int(spec[i+2]); b++ {
				c[b] = true
			}
			i += 2
			continue
		}
		c[spec[i]] = true
	}
	return &c
}

var (
	clsAlnum      = newClass("A-Za-z0-9")
	clsUpperAlnum = newClass("A-Z0-9")
	clsWord       = newClass("A-Za-z0-9_")
	clsB64URL     = newClass("A-Za-z0-9_-")
	clsB64        = newClass("A-Za-z0-9+/=")
	clsSlackBody  = newClass("A-Za-z0-9-")
	clsJWTLeft    = newClass("A-Za-z0-9_.-")
	clsHookBody   = newClass("A-Za-z0-9_/+-")
	clsPEMLabel   = newClass("A-Z0-9 ")
	clsPEMHeader  = newClass("A-Za-z-")
	clsScheme     = newClass("A-Za-z0-9+.-")
)

// runEnd returns the end of the run of bytes in c that starts at i.
func runEnd(s string, i int, c *charClass) int {
	for i < len(s) && c[s[i]] {
		i++
	}
	return i
}

// runEndMax is runEnd that stops after at most max bytes.
func runEndMax(s string, i int, c *charClass, max int) int {
	limit := i + max
	if limit > len(s) {
		limit = len(s)
	}
	for i < limit && c[s[i]] {
		i++
	}
	return i
}

// prevIn reports whether the byte before position p is in c.
func prevIn(s string, p int, c *charClass) bool { return p > 0 && c[s[p-1]] }

func isDigit(b byte) bool  { return b >= '0' && b <= '9' }
func isUpper(b byte) bool  { return b >= 'A' && b <= 'Z' }
func isLower(b byte) bool  { return b >= 'a' && b <= 'z' }
func isLetter(b byte) bool { return isUpper(b) || isLower(b) }

// tokenRule describes a token that starts with a literal prefix followed by
// a run of body characters.
type tokenRule struct {
	kind     string
	prefixes []string
	leftBad  *charClass // the byte before the prefix must not be in this class
	body     *charClass
	min      int        // minimum body length
	exact    int        // if > 0, the body run must be exactly this long
	rightBad *charClass // if set, the byte after the body must not be in this class
	// validate, if set, gets the whole match and may reject it.
	validate func(match, body string) bool
}

var tokenRules = []tokenRule{
	{
		kind:     kindAWSAccessKey,
		prefixes: []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"},
		leftBad:  clsAlnum, body: clsUpperAlnum, exact: 16, rightBad: clsAlnum,
	},
	{
		kind:     kindGitHubToken,
		prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		leftBad:  clsWord, body: clsAlnum, min: 36,
	},
	{
		kind:     kindGitHubToken,
		prefixes: []string{"github_pat_"},
		leftBad:  clsWord, body: clsWord, min: 22,
	},
	{
		kind:     kindGitLabToken,
		prefixes: []string{"glpat-"},
		leftBad:  clsWord, body: clsB64URL, min: 20,
	},
	{
		kind:     kindSlackToken,
		prefixes: []string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxe-"},
		leftBad:  clsWord, body: clsSlackBody, min: 10,
		validate: func(_, body string) bool { return isDigit(body[0]) },
	},
	{
		kind:     kindStripeKey,
		prefixes: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"},
		leftBad:  clsWord, body: clsAlnum, min: 20,
	},
	{
		kind:     kindGoogleAPIKey,
		prefixes: []string{"AIza"},
		leftBad:  clsB64URL, body: clsB64URL, exact: 35,
	},
	{
		kind:     kindAnthropicKey,
		prefixes: []string{"sk-ant-"},
		leftBad:  clsWord, body: clsB64URL, min: 20,
	},
	{
		kind:     kindOpenAIKey,
		prefixes: []string{"sk-"},
		leftBad:  clsB64URL, body: clsB64URL, min: 20,
		validate: validOpenAI,
	},
	{
		kind:     kindNPMToken,
		prefixes: []string{"npm_"},
		leftBad:  clsWord, body: clsAlnum, min: 36,
	},
}

// validOpenAI accepts project, service-account and admin keys, legacy keys
// carrying the "T3BlbkFJ" marker, and other sk- keys whose body is one run
// of letters and digits mixing upper case, lower case and digits.
func validOpenAI(match, body string) bool {
	if strings.HasPrefix(match, "sk-ant-") {
		return false
	}
	for _, p := range []string{"proj-", "svcacct-", "admin-"} {
		if strings.HasPrefix(body, p) {
			rest := body[len(p):]
			return len(rest) >= 20 && hasDigit(rest) && hasLetter(rest)
		}
	}
	if strings.Contains(body, "T3BlbkFJ") {
		return true
	}
	if runEnd(body, 0, clsAlnum) != len(body) {
		return false
	}
	var up, low, dig bool
	for i := 0; i < len(body); i++ {
		switch b := body[i]; {
		case isUpper(b):
			up = true
		case isLower(b):
			low = true
		case isDigit(b):
			dig = true
		}
	}
	return up && low && dig
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}

// prefixIndex maps the first byte of every token prefix to the rules and
// prefixes that start with it.
var prefixIndex = func() (idx [256][]rulePrefix) {
	for ri := range tokenRules {
		for _, p := range tokenRules[ri].prefixes {
			idx[p[0]] = append(idx[p[0]], rulePrefix{ri, p})
		}
	}
	return idx
}()

type rulePrefix struct {
	rule   int
	prefix string
}

// scanTokens applies every tokenRule in one pass over s. Within a rule,
// matches never overlap (next[rule] is where the rule's last match ended).
// A rejected candidate costs at most one scan of its body run, and a later
// candidate inside that run fails the left-boundary check immediately (each
// rule's leftBad class contains its body class), so the work is linear.
func scanTokens(s string, c *collector) {
	next := make([]int, len(tokenRules))
	for p := 0; p < len(s); p++ {
		cands := prefixIndex[s[p]]
		if cands == nil {
			continue
		}
		for _, rp := range cands {
			r := &tokenRules[rp.rule]
			if p < next[rp.rule] || !strings.HasPrefix(s[p:], rp.prefix) || prevIn(s, p, r.leftBad) {
				continue
			}
			bs := p + len(rp.prefix)
			var e int
			if r.exact > 0 {
				e = runEndMax(s, bs, r.body, r.exact+1)
				if e-bs != r.exact {
					continue
				}
			} else {
				e = runEnd(s, bs, r.body)
				if e-bs < r.min {
					continue
				}
			}
			if r.rightBad != nil && e < len(s) && r.rightBad[s[e]] {
				continue
			}
			if r.validate != nil && !r.validate(s[p:e], s[bs:e]) {
				continue
			}
			c.add(p, e, r.kind)
			next[rp.rule] = e
		}
	}
}

// scanJWTs finds eyJ... tokens with three (or, for JWE, up to five)
// base64url segments of at least 10 characters each.
func scanJWTs(s string, c *collector) {
	from := 0
	for from < len(s) {
		i := strings.Index(s[from:], "eyJ")
		if i < 0 {
			return
		}
		p := from + i
		from = p + 1
		if prevIn(s, p, clsJWTLeft) {
			continue
		}
		end := p
		ok := true
		for seg := 0; seg < 3; seg++ {
			if seg > 0 {
				if end >= len(s) || s[end] != '.' {
					ok = false
					break
				}
				end++
			}
			e := runEnd(s, end, clsB64URL)
			if e-end < 10 {
				ok = false
				break
			}
			end = e
		}
		if !ok {
			continue
		}
		for k := 0; k < 2 && end+1 < len(s) && s[end] == '.'; k++ {
			e := runEnd(s, end+1, clsB64URL)
			if e == end+1 {
				break
			}
			end = e
		}
		c.add(p, end, kindJWT)
		from = end
	}
}

// scanSlackWebhooks finds https://hooks.slack.com/{services,workflows,triggers}/...
func scanSlackWebhooks(s string, c *collector) {
	const host = "hooks.slack.com/"
	from := 0
	for from < len(s) {
		i := strings.Index(s[from:], host)
		if i < 0 {
			return
		}
		p := from + i
		from = p + 1
		start := p
		switch {
		case p >= 8 && s[p-8:p] == "https://":
			start = p - 8
		case p >= 7 && s[p-7:p] == "http://":
			start = p - 7
		case prevIn(s, p, clsJWTLeft):
			continue
		}
		rest := p + len(host)
		matched := false
		for _, kind := range []string{"services/", "workflows/", "triggers/"} {
			if strings.HasPrefix(s[rest:], kind) {
				rest += len(kind)
				matched = true
				break
			}
		}
		if !matched {
			continue
		}
		e := runEnd(s, rest, clsHookBody)
		if e-rest < 20 {
			continue
		}
		c.add(start, e, kindSlackWebhook)
		from = e
	}
}

// scanPrivateKeys finds PEM private key blocks.
func scanPrivateKeys(s string, c *collector) {
	const begin = "-----BEGIN "
	var ends *pemEnds
	from := 0
	for from < len(s) {
		p, label, hdrEnd := nextPrivatePEMLine(s, from, begin)
		if p < 0 {
			return
		}
		if !keyMaterialFollows(s, hdrEnd) {
			from = hdrEnd
			continue
		}
		if ends == nil {
			ends = findPEMEnds(s)
		}
		if e, ok := ends.after(hdrEnd, label); ok {
			c.add(p, e, kindPrivateKey)
			from = e
			continue
		}
		// Unterminated: everything to the end is key material.
		c.add(p, len(s), kindPrivateKey)
		return
	}
}

// nextPrivatePEMLine finds the first "<marker><label>-----" at or after from
// whose label is a private key's. It returns the marker's offset (-1 when
// there is none), the label and the offset just past the trailing dashes.
func nextPrivatePEMLine(s string, from int, marker string) (int, string, int) {
	for from < len(s) {
		i := strings.Index(s[from:], marker)
		if i < 0 {
			break
		}
		p := from + i
		from = p + 1
		ls := p + len(marker)
		le := runEndMax(s, ls, clsPEMLabel, 64)
		if !strings.HasPrefix(s[le:], "-----") {
			continue
		}
		label := s[ls:le]
		if !isPrivateLabel(label) {
			continue
		}
		return p, label, le + len("-----")
	}
	return -1, "", 0
}

func isPrivateLabel(label string) bool {
	return strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")
}

// keyMaterialFollows reports whether the text after a PEM header looks like
// key material: after separators (whitespace, quotes, '+', ',' and escaped
// \n or \r) comes either a run of at least 16 base64 characters or an RFC
// 1421 style header line such as "Proc-Type: 4,ENCRYPTED".
func keyMaterialFollows(s string, i int) bool {
	limit := i + 64
	for i < len(s) && i < limit {
		switch b := s[i]; b {
		case ' ', '\t', '\r', '\n', '"', '\'', '`', '+', ',':
			i++
			continue
		case '\\':
			if i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r') {
				i += 2
				continue
			}
		}
		break
	}
	if runEndMax(s, i, clsB64, 16)-i >= 16 {
		return true
	}
	e := runEndMax(s, i, clsPEMHeader, 40)
	return e > i && e+1 < len(s) && s[e] == ':' && s[e+1] == ' '
}

// pemEnds indexes every "-----END <label>-----" line in a string.
type pemEnds struct {
	byLabel map[string][]int // label -> end offsets (just past the trailing dashes), ascending
	private []int            // end offsets of every private-key END line, ascending
}

func findPEMEnds(s string) *pemEnds {
	const end = "-----END "
	pe := &pemEnds{byLabel: make(map[string][]int)}
	from := 0
	for from < len(s) {
		p, label, e := nextPrivatePEMLine(s, from, end)
		if p < 0 {
			break
		}
		pe.byLabel[label] = append(pe.byLabel[label], e)
		pe.private = append(pe.private, e)
		from = e
	}
	return pe
}

// after returns the end of the first END line with the same label that
// starts at or after pos, or failing that the first private-key END line of
// any label.
func (pe *pemEnds) after(pos int, label string) (int, bool) {
	first := func(list []int) (int, bool) {
		// The END line must start at or after pos; its shortest form,
		// "-----END PRIVATE KEY-----", is minEnd bytes long.
		const minEnd = len("-----END PRIVATE KEY-----")
		k := sort.SearchInts(list, pos+minEnd)
		if k < len(list) {
			return list[k], true
		}
		return 0, false
	}
	if e, ok := first(pe.byLabel[label]); ok {
		return e, true
	}
	return first(pe.private)
}

// scanCredentialURLs finds scheme://user:password@host and reports the
// password.
func scanCredentialURLs(s string, c *collector) {
	from := 0
	for from < len(s) {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return
		}
		p := from + i
		from = p + 3
		// The scheme: letters, digits, '+', '.', '-', starting with a letter.
		a := p
		for a > 0 && p-a < 32 && clsScheme[s[a-1]] {
			a--
		}
		for a < p && !isLetter(s[a]) {
			a++
		}
		if a == p {
			continue
		}
		h := p + 3
		e := h
		for e < len(s) && !authorityStop(s[e]) {
			e++
		}
		from = e
		auth := s[h:e]
		at := strings.LastIndexByte(auth, '@')
		if at < 0 {
			continue
		}
		userinfo, host := auth[:at], auth[at+1:]
		if host == "" || !(clsAlnum[host[0]] || host[0] == '[') {
			continue
		}
		colon := strings.IndexByte(userinfo, ':')
		if colon < 0 {
			continue
		}
		pw := userinfo[colon+1:]
		if pw == "" || urlPasswordPlaceholder(pw) {
			continue
		}
		c.add(h+colon+1, h+at, kindCredentialURL)
	}
}

func authorityStop(b byte) bool {
	switch b {
	case '/', '?', '#', '"', '\'', '`', '<', '>', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return b < 0x20 || b == 0x7f
}

// urlPasswordPlaceholder reports whether a URL password is a template or an
// obvious stand-in rather than a real password.
func urlPasswordPlaceholder(pw string) bool {
	switch pw[0] {
	case '$', '{', '<', '[':
		return true
	}
	if pw == "%s" || pw == "%v" {
		return true
	}
	return isPlaceholder(pw)
}
