package redact

import (
	"math"
	"strings"
)

// Assignments: NAME <op> VALUE where NAME looks like it holds a secret.

var (
	clsIdent  = newClass("A-Za-z0-9_.-")
	clsB64Std = newClass("A-Za-z0-9+/")
)

const (
	maxNameLen  = 128  // longer identifier runs are not names
	maxValueLen = 1024 // longer values are not single secrets (and bound the work)
)

// scanAssignments walks the identifier-like runs of s once. A run followed
// by an assignment operator and classified as a secret name has its value
// judged. Each value scan is bounded by maxValueLen and a recorded value is
// skipped afterwards, so the work is linear (at worst maxValueLen times the
// input length, for text made of nothing but secret names and operators).
func scanAssignments(s string, c *collector) {
	i := 0
	for i < len(s) {
		if !clsIdent[s[i]] {
			i++
			continue
		}
		a := i
		i = runEnd(s, i, clsIdent)
		if i-a > maxNameLen || a >= len(markerPrefix) && s[a-len(markerPrefix):a] == markerPrefix {
			continue // too long, or the kind inside a marker
		}
		vs, literal, ok := afterOperator(s, a, i)
		if !ok {
			// "aws configure set aws_secret_access_key VALUE": the AWS
			// secret name followed by blanks and a 40-character value.
			if i < len(s) && (s[i] == ' ' || s[i] == '\t') && i-a >= 15 &&
				strings.EqualFold(s[i-3:i], "key") && classifyName(s[a:i]).aws {
				vs = skipBlanks(s, i)
				if e := runEnd(s, vs, clsB64Std); e-vs == 40 && (e == len(s) || valueStop(s[e])) {
					c.add(vs, e, kindAWSSecretKey)
					i = e
				}
			}
			continue
		}
		nk := classifyName(s[a:i])
		if !nk.secret {
			continue
		}
		if next := judgeAssignment(s, vs, nk, literal, c); next > i {
			i = next
		}
	}
}

// afterOperator checks that the name s[a:b] is followed by an assignment
// operator (=, :, := or =>, optionally after a closing quote or bracket and
// blanks) and returns where the value starts. literal reports NAME=value
// with no blanks where NAME is an upper-case environment variable or a
// --flag: there the value is a literal string even when unquoted.
func afterOperator(s string, a, b int) (vs int, literal, ok bool) {
	j := b
	for k := 0; k < 3 && j < len(s); k++ {
		switch s[j] {
		case '"', '\'', '`', ']', '\\':
			j++
			continue
		}
		break
	}
	closed := j > b
	sp := j
	j = skipBlanks(s, j)
	blankBefore := j > sp
	if j >= len(s) {
		return 0, false, false
	}
	next := byte(0)
	if j+1 < len(s) {
		next = s[j+1]
	}
	eq := false
	switch s[j] {
	case ':':
		switch next {
		case '=':
			j += 2
		case ':':
			return 0, false, false
		default:
			j++
		}
	case '=':
		switch next {
		case '>':
			j += 2
		case '=', '~':
			return 0, false, false
		default:
			eq = true
			j++
		}
	default:
		return 0, false, false
	}
	k := skipBlanks(s, j)
	blankAfter := k > j
	if eq && !closed && !blankBefore && !blankAfter {
		literal = isEnvName(s[a:b]) || strings.HasPrefix(s[a:b], "--")
	}
	return k, literal, true
}

func skipBlanks(s string, i int) int {
	for n := 0; i < len(s) && n < 32 && (s[i] == ' ' || s[i] == '\t'); n++ {
		i++
	}
	return i
}

// isEnvName reports whether name looks like an environment variable:
// upper-case letters, digits and underscores, with at least one letter.
func isEnvName(name string) bool {
	letter := false
	for i := 0; i < len(name); i++ {
		switch b := name[i]; {
		case isUpper(b):
			letter = true
		case isDigit(b), b == '_':
		default:
			return false
		}
	}
	return letter
}

// nameKind classifies an assignment's name.
type nameKind struct {
	secret   bool // the value may be a secret
	password bool // password-like: literal values of 8+ characters count
	auth     bool // auth/authorization: the value may start with "Bearer " etc.
	aws      bool // ends in secret_access_key
}

var keyQualifiers = setOf("api", "access", "private", "secret", "signing", "sign",
	"encryption", "encrypt", "master", "auth", "app", "license", "client", "consumer",
	"account", "service", "deploy", "webhook", "admin", "session", "hmac", "jwt", "shared")

var passwordWords = setOf("password", "passwd", "pwd", "pass", "passphrase", "passcode")

var secretWords = setOf("secret", "token", "apikey", "credential", "credentials", "creds")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// classifyName decides whether an identifier names a secret, looking at its
// last word (words are split at '_', '-', '.', camelCase and digit
// boundaries): password, passwd, pwd, pass, passphrase, secret, token,
// apikey, credentials, auth, authorization, KEY after a qualifier such as
// api/access/private/secret/client, and lower-case compounds such as
// pgpassword, accesstoken or clientsecret. Names such as token_count,
// secretName, author or password_hash do not count.
func classifyName(name string) nameKind {
	name = strings.Trim(name, "-._")
	var nk nameKind
	if name == "" || !mentionsSecret(name) {
		return nk
	}
	var compact strings.Builder
	for i := 0; i < len(name); i++ {
		b := name[i]
		if b == '_' || b == '-' || b == '.' {
			continue
		}
		compact.WriteByte(toLower(b))
	}
	if strings.HasSuffix(compact.String(), "secretaccesskey") {
		nk.aws, nk.secret = true, true
	}
	words := nameWords(name)
	for len(words) > 0 && strings.TrimRight(words[len(words)-1], "0123456789") == "" {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return nk
	}
	last := strings.TrimRight(words[len(words)-1], "0123456789")
	prev := ""
	if len(words) > 1 {
		prev = words[len(words)-2]
	}
	switch {
	case passwordWords[last],
		strings.HasSuffix(last, "password"),
		strings.HasSuffix(last, "passwd"),
		strings.HasSuffix(last, "passphrase"):
		nk.secret, nk.password = true, true
	case last == "auth", last == "authorization":
		nk.secret, nk.auth = true, true
	case secretWords[last],
		strings.HasSuffix(last, "token"),
		strings.HasSuffix(last, "secret"),
		strings.HasSuffix(last, "apikey"):
		nk.secret = true
	case last == "key" && keyQualifiers[prev]:
		nk.secret = true
	case len(last) > 3 && strings.HasSuffix(last, "key") && keyQualifiers[last[:len(last)-3]]:
		nk.secret = true
	}
	return nk
}

// mentionsSecret is a quick filter: whether name contains, ignoring case,
// one of the stems every secret name has.
func mentionsSecret(name string) bool {
	for _, stem := range []string{"pass", "pwd", "secret", "token", "key", "auth", "cred"} {
		if containsFold(name, stem) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII word sub,
// ignoring ASCII case.
func containsFold(s, sub string) bool {
outer:
	for i := 0; i+len(sub) <= len(s); i++ {
		for j := 0; j < len(sub); j++ {
			if toLower(s[i+j]) != sub[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

func toLower(b byte) byte {
	if isUpper(b) {
		return b + 'a' - 'A'
	}
	return b
}

// nameWords splits an identifier into lower-case words at '_', '-', '.',
// lower-to-upper transitions ("apiKey") and the end of an upper-case run
// followed by a lower-case letter ("APIKey").
func nameWords(name string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if b == '_' || b == '-' || b == '.' {
			flush(i)
			continue
		}
		if isUpper(b) && i > 0 && start >= 0 {
			p := name[i-1]
			if isLower(p) || isDigit(p) || (isUpper(p) && i+1 < len(name) && isLower(name[i+1])) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(name))
	return words
}

func isQuote(b byte) bool { return b == '"' || b == '\'' || b == '`' }

// valueStop ends an unquoted value.
func valueStop(b byte) bool {
	switch b {
	case '"', '\'', '`', ',', ';', '&', ')', ']', '}', '>', '\\', ' ':
		return true
	}
	return b < 0x20 || b == 0x7f
}

// judgeAssignment parses the value starting at vs and records it if it is a
// secret. It returns the end of a recorded value, which the caller may skip
// to, or 0. A rejected value is not skipped: it may contain another
// assignment ("a=b,token=..."); the cost of rescanning is bounded by
// maxValueLen per name.
func judgeAssignment(s string, vs int, nk nameKind, literal bool, c *collector) int {
	p, q := valueOpening(s, vs)
	scheme := ""
	if nk.auth {
		scheme, p = authScheme(s, p)
	}
	start := p
	end, quoted := quotedValueEnd(s, p, q)
	if !quoted {
		var ok bool
		if end, ok = bareValueEnd(s, p); !ok {
			return 0
		}
	}
	v := s[start:end]
	if kind, ok := judgeValue(v, nk, literal || quoted, quoted, scheme); ok {
		c.add(start, end, kind)
		return end
	}
	return 0
}

// valueOpening skips an escaped (\") or plain opening quote at vs and
// returns where the value proper starts and the quote (0 for none).
func valueOpening(s string, vs int) (int, byte) {
	p := vs
	if p+1 < len(s) && s[p] == '\\' && isQuote(s[p+1]) {
		p++
	}
	var q byte
	if p < len(s) && isQuote(s[p]) {
		q = s[p]
		p++
	}
	return p, q
}

// authScheme skips an HTTP authorization scheme ("Bearer ", "Basic ",
// "token ", "Bot ", any case) at p and returns it in lower case with the
// position after it; with none it returns "" and p.
func authScheme(s string, p int) (string, int) {
	for _, sc := range []string{"bearer", "basic", "token", "bot"} {
		if len(s)-p > len(sc) && strings.EqualFold(s[p:p+len(sc)], sc) && s[p+len(sc)] == ' ' {
			return sc, p + len(sc) + 1
		}
	}
	return "", p
}

// quotedValueEnd finds the closing quote q of a value starting at p, on
// the same line and within maxValueLen; it reports false (and p) when q is
// 0 or the quote does not close in time.
func quotedValueEnd(s string, p int, q byte) (int, bool) {
	if q == 0 {
		return p, false
	}
	k := p
	for k < len(s) && k-p <= maxValueLen && s[k] != q && s[k] != '\n' {
		k++
	}
	if k >= len(s) || s[k] != q || k-p > maxValueLen {
		return p, false
	}
	end := k
	if end > p && s[end-1] == '\\' {
		end-- // \" closing a JSON string embedded in a string
	}
	return end, true
}

// bareValueEnd finds the end of an unquoted value starting at p (trailing
// '.' and ':' are sentence punctuation, not value); false when it runs past
// maxValueLen.
func bareValueEnd(s string, p int) (int, bool) {
	k := p
	for k < len(s) && k-p <= maxValueLen && !valueStop(s[k]) {
		k++
	}
	if k-p > maxValueLen {
		return 0, false
	}
	end := k
	for end > p && (s[end-1] == '.' || s[end-1] == ':') {
		end--
	}
	return end, true
}

// judgeValue decides whether an assigned value is a secret.
func judgeValue(v string, nk nameKind, literal, quoted bool, scheme string) (string, bool) {
	if v == "" {
		return "", false
	}
	if nk.aws && len(v) == 40 && runEnd(v, 0, clsB64Std) == 40 {
		return kindAWSSecretKey, true
	}
	if scheme == "basic" {
		ok := len(v) >= 8 && runEnd(v, 0, clsB64) == len(v) && !isPlaceholder(v)
		return kindSecretAssignment, ok
	}
	// (a) random-looking value; (b) literal password of 8+ characters.
	random := len(v) >= 12 && hasDigit(v) && entropy(v) >= 3.5
	password := nk.password && literal && len(v) >= 8
	if !random && !password {
		return "", false
	}
	if !cleanValue(v) || isPlaceholder(v) {
		return "", false
	}
	if random && !codeLike(v, quoted) {
		return kindSecretAssignment, true
	}
	if password && !pathLike(v) {
		return kindSecretAssignment, true
	}
	return "", false
}

// cleanValue reports whether v is a single printable ASCII token without
// the characters of code, templates and interpolation: ( ) [ ] { } < > $ \.
func cleanValue(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if b <= ' ' || b >= 0x7f {
			return false
		}
		switch b {
		case '(', ')', '[', ']', '{', '}', '<', '>', '$', '\\':
			return false
		}
	}
	return true
}

// entropy is the Shannon entropy of v in bits per byte.
func entropy(v string) float64 {
	var counts [256]int
	for i := 0; i < len(v); i++ {
		counts[v[i]]++
	}
	n := float64(len(v))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

var placeholderParts = []string{
	"example", "dummy", "changeme", "change_me", "change-me", "changeit",
	"placeholder", "your", "redacted", "sample", "fake", "test", "xxxx", "****",
	"%s", "%v", "%d", "replace", "insert", "todo", "fixme", "notreal", "not-real",
	"not_real", "lorem", "foobar",
}

var placeholderWords = setOf("password", "passwd", "pass", "pwd", "secret", "token",
	"apikey", "key", "none", "null", "nil", "undefined", "default", "empty", "string",
	"value", "hidden", "masked", "unset", "required", "optional", "true", "false",
	"admin", "root", "user", "username", "qwerty", "letmein", "abc", "abcdef", "xyz")

// isPlaceholder reports whether v is an obvious stand-in: a masked or
// repeated character run, a word such as changeme/example/dummy/test, or a
// bare word such as password or secret (ignoring digits and punctuation).
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	same, masked := true, true
	for i := 0; i < len(v); i++ {
		if v[i] != v[0] {
			same = false
		}
		if !strings.ContainsRune("*xX.#-_", rune(v[i])) {
			masked = false
		}
	}
	if same || masked {
		return true
	}
	lv := strings.ToLower(v)
	for _, p := range placeholderParts {
		if strings.Contains(lv, p) {
			return true
		}
	}
	var letters strings.Builder
	for i := 0; i < len(lv); i++ {
		if isLower(lv[i]) {
			letters.WriteByte(lv[i])
		}
	}
	return placeholderWords[letters.String()]
}

// codeLike reports values that are references rather than secrets: URLs,
// e-mail addresses, file paths, dotted identifier paths (unquoted) such as
// process.env.API_KEY, and lists of words such as prod-db-credentials-v2.
func codeLike(v string, quoted bool) bool {
	if strings.Contains(v, "://") || strings.IndexByte(v, '@') >= 0 {
		return true
	}
	if pathLike(v) || isWordList(v) {
		return true
	}
	return !quoted && isDottedPath(v)
}

// pathLike reports ./x, ../x, ~/x and lower-case absolute paths.
func pathLike(v string) bool {
	if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") {
		return true
	}
	if !strings.HasPrefix(v, "/") {
		return false
	}
	for i := 0; i < len(v); i++ {
		b := v[i]
		if !(isLower(b) || isDigit(b) || b == '_' || b == '.' || b == '/' || b == '-') {
			return false
		}
	}
	return true
}

// isDottedPath reports a.b(.c...) where every segment is an identifier
// that is short or has no digits (random strings have long digit-bearing
// segments).
func isDottedPath(v string) bool {
	segs := strings.Split(v, ".")
	if len(segs) < 2 {
		return false
	}
	for _, seg := range segs {
		if seg == "" || isDigit(seg[0]) {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if b := seg[i]; !(isLetter(b) || isDigit(b) || b == '_') {
				return false
			}
		}
		if len(seg) > 6 && hasDigit(seg) {
			return false
		}
	}
	return true
}

// isWordList reports single-case words, numbers and short pieces joined by
// '-', '_' or '.': prod-db-credentials-v2, oauth2-proxy-v7.4.0,
// SOME_CONSTANT_2. A word is letters with a vowel, optionally followed by
// digits; random strings (including UUIDs) have pieces that are neither.
func isWordList(v string) bool {
	lower, upper := true, true
	for i := 0; i < len(v); i++ {
		if isUpper(v[i]) {
			lower = false
		}
		if isLower(v[i]) {
			upper = false
		}
	}
	if !lower && !upper {
		return false
	}
	segs := strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if len(segs) < 2 {
		return false
	}
	for _, seg := range segs {
		if !wordPiece(strings.ToLower(seg)) {
			return false
		}
	}
	return true
}

func wordPiece(seg string) bool {
	if len(seg) <= 3 || strings.TrimLeft(seg, "0123456789") == "" {
		return true
	}
	letters := strings.TrimRight(seg, "0123456789")
	if letters == "" {
		return false
	}
	for i := 0; i < len(letters); i++ {
		if !isLower(letters[i]) {
			return false
		}
	}
	return strings.ContainsAny(letters, "aeiouy")
}
