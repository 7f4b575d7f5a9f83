package redact

import (
	"bufio"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every secret below is fake: correctly shaped, randomly generated, never
// issued by any service.

const corpusDir = "../testdata/redact"

type catchCase struct {
	kind, line string
	lineNo     int
}

func readCatch(t testing.TB) []catchCase {
	t.Helper()
	var out []catchCase
	for i, line := range readLines(t, "catch.txt") {
		kind, text, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("catch.txt:%d: no tab after the kind", i+1)
		}
		out = append(out, catchCase{kind, text, i + 1})
	}
	return out
}

func readLines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// secretOf returns the secret a catch line carries: its longest run of
// token characters [A-Za-z0-9+/=_-]. The corpus is written so that this
// holds (values are longer than the names they are assigned to).
func secretOf(line string) string {
	best, start := "", -1
	for i := 0; i <= len(line); i++ {
		in := i < len(line) && clsB64URL[line[i]] || i < len(line) && (line[i] == '+' || line[i] == '/' || line[i] == '=')
		if in && start < 0 {
			start = i
		}
		if !in && start >= 0 {
			if i-start > len(best) {
				best = line[start:i]
			}
			start = -1
		}
	}
	return best
}

func TestCatchCorpus(t *testing.T) {
	cases := readCatch(t)
	perKind := map[string]int{}
	for _, c := range cases {
		perKind[c.kind]++
		secret := secretOf(c.line)
		if len(secret) < 8 {
			t.Errorf("catch.txt:%d: cannot tell the secret (got %q)", c.lineNo, secret)
			continue
		}
		r := String(c.line)
		if !slices.Contains(r.Kinds, c.kind) {
			t.Errorf("catch.txt:%d: want kind %s, got %v\n  in:  %s\n  out: %s", c.lineNo, c.kind, r.Kinds, c.line, r.Text)
		}
		if strings.Contains(r.Text, secret) {
			t.Errorf("catch.txt:%d: secret %q survived\n  out: %s", c.lineNo, secret, r.Text)
		}
		if r.Count == 0 || !strings.Contains(r.Text, "[REDACTED:"+c.kind+"]") {
			t.Errorf("catch.txt:%d: no [REDACTED:%s] marker in %q", c.lineNo, c.kind, r.Text)
		}
	}
	for _, k := range allKinds {
		if perKind[k] < 2 {
			t.Errorf("catch.txt has %d examples of %s, want at least 2", perKind[k], k)
		}
	}
	for k := range perKind {
		if !slices.Contains(allKinds, k) {
			t.Errorf("catch.txt uses unknown kind %q", k)
		}
	}
	t.Logf("catch corpus: %d lines, %d kinds", len(cases), len(perKind))
}

func TestKeepCorpus(t *testing.T) {
	lines := readLines(t, "keep.txt")
	if len(lines) < 60 {
		t.Errorf("keep.txt has %d lines, want at least 60", len(lines))
	}
	for i, line := range lines {
		r := String(line)
		if r.Count != 0 || r.Text != line || r.Kinds != nil {
			t.Errorf("keep.txt:%d: changed (%d, %v)\n  in:  %s\n  out: %s", i+1, r.Count, r.Kinds, line, r.Text)
		}
	}
	// The whole file at once as well: context across lines must not matter.
	all := strings.Join(lines, "\n")
	if r := String(all); r.Count != 0 {
		t.Errorf("keep.txt as one text: %d findings %v", r.Count, r.Kinds)
	}
	t.Logf("keep corpus: %d lines", len(lines))
}

// A fake key body: random base64 lines.
func fakeKeyBody(rng *rand.Rand, lines int) string {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	for i := 0; i < lines; i++ {
		for j := 0; j < 64; j++ {
			b.WriteByte(b64[rng.Intn(len(b64))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestTable(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	body := fakeKeyBody(rng, 4)
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + body + "-----END RSA PRIVATE KEY-----"
	ghp := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "Zz09Yy"
	tests := []struct {
		name  string
		in    string
		want  string
		count int
		kinds []string
	}{
		{
			name: "empty", in: "", want: "",
		},
		{
			name:  "pem block inside longer text",
			in:    "Summary: rotated the key.\nOld key:\n" + pem + "\nFiles: deploy/key.pem\n",
			want:  "Summary: rotated the key.\nOld key:\n[REDACTED:private-key]\nFiles: deploy/key.pem\n",
			count: 1, kinds: []string{"private-key"},
		},
		{
			name:  "two pem blocks keep the text between them",
			in:    pem + "\nmiddle text\n" + strings.ReplaceAll(pem, "RSA", "EC"),
			want:  "[REDACTED:private-key]\nmiddle text\n[REDACTED:private-key]",
			count: 2, kinds: []string{"private-key"},
		},
		{
			name:  "unterminated pem redacts to the end",
			in:    "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nmore text that is lost",
			want:  "before\n[REDACTED:private-key]",
			count: 1, kinds: []string{"private-key"},
		},
		{
			name:  "mismatched END label still terminates the block",
			in:    "-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----\nafter",
			want:  "[REDACTED:private-key]\nafter",
			count: 1, kinds: []string{"private-key"},
		},
		{
			name: "pem header without key material is kept",
			in:   `if bytes.HasPrefix(b, []byte("-----BEGIN RSA PRIVATE KEY-----")) && bytes.Contains(b, []byte("-----END RSA PRIVATE KEY-----")) {`,
			want: `if bytes.HasPrefix(b, []byte("-----BEGIN RSA PRIVATE KEY-----")) && bytes.Contains(b, []byte("-----END RSA PRIVATE KEY-----")) {`,
		},
		{
			name: "public keys and certificates are kept",
			in:   "-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----",
			want: "-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----",
		},
		{
			name:  "credential url keeps scheme user and host",
			in:    "cloned https://bob:Xk9fQ2mL7pR4@git.internal.corp/team/repo.git ok",
			want:  "cloned https://bob:[REDACTED:credential-url]@git.internal.corp/team/repo.git ok",
			count: 1, kinds: []string{"credential-url"},
		},
		{
			name:  "credential url with empty user",
			in:    "redis://:Xk9fQ2mL7pR4@cache:6379/0",
			want:  "redis://:[REDACTED:credential-url]@cache:6379/0",
			count: 1, kinds: []string{"credential-url"},
		},
		{
			name:  "credential url password containing @",
			in:    "https://bob:p@ssW0rd!x@host.example/",
			want:  "https://bob:[REDACTED:credential-url]@host.example/",
			count: 1, kinds: []string{"credential-url"},
		},
		{
			name: "credential url with empty password is kept",
			in:   "http://bob:@localhost:8080/ and ssh://git@host/x and https://host:8443/p@th",
			want: "http://bob:@localhost:8080/ and ssh://git@host/x and https://host:8443/p@th",
		},
		{
			name:  "token as url password reports the specific kind",
			in:    "https://x-access-token:" + ghp + "@github.com/o/r.git",
			want:  "https://x-access-token:[REDACTED:github-token]@github.com/o/r.git",
			count: 1, kinds: []string{"github-token"},
		},
		{
			name:  "specific shape wins over assignment",
			in:    "GITHUB_TOKEN=" + ghp,
			want:  "GITHUB_TOKEN=[REDACTED:github-token]",
			count: 1, kinds: []string{"github-token"},
		},
		{
			name:  "bearer jwt is one jwt finding",
			in:    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
			want:  "Authorization: Bearer [REDACTED:jwt]",
			count: 1, kinds: []string{"jwt"},
		},
		{
			name:  "a longer assignment value swallows a token inside it",
			in:    `token = "prefix-` + ghp + `"`,
			want:  `token = "[REDACTED:secret-assignment]"`,
			count: 1, kinds: []string{"secret-assignment"},
		},
		{
			name:  "adjacent and repeated secrets",
			in:    ghp + "," + ghp + " AKIAZZZZ5555ABCDEFGH;AKIAZZZZ5555ABCDEFGH",
			want:  "[REDACTED:github-token],[REDACTED:github-token] [REDACTED:aws-access-key];[REDACTED:aws-access-key]",
			count: 4, kinds: []string{"aws-access-key", "github-token"},
		},
		{
			name:  "anthropic is not openai",
			in:    "sk-ant-api03-" + strings.Repeat("Ab3_", 10),
			want:  "[REDACTED:anthropic-key]",
			count: 1, kinds: []string{"anthropic-key"},
		},
		{
			name: "sk- glued to a word is not a key",
			in:   "task-sk-Ab3dE5fG7hJ9kL1mN3pQ5rS7 and sk-learn-compat-layer-with-words",
			want: "task-sk-Ab3dE5fG7hJ9kL1mN3pQ5rS7 and sk-learn-compat-layer-with-words",
		},
		{
			name: "aws access key needs exactly 16 characters",
			in:   "AKIA alone, AKIAZZZZ5555ABCDEFG (15), AKIAZZZZ5555ABCDEFGHI (17), AKIAZZZZ5555ABCDEFGh",
			want: "AKIA alone, AKIAZZZZ5555ABCDEFG (15), AKIAZZZZ5555ABCDEFGHI (17), AKIAZZZZ5555ABCDEFGh",
		},
		{
			name:  "only the value of an assignment is replaced",
			in:    `  "client_secret": "Q8fK2mZ7xR4pL9sV3nB6",`,
			want:  `  "client_secret": "[REDACTED:secret-assignment]",`,
			count: 1, kinds: []string{"secret-assignment"},
		},
		{
			name:  "json embedded in a string",
			in:    `"{\"password\":\"Q8fK2mZ7xR4p\"}"`,
			want:  `"{\"password\":\"[REDACTED:secret-assignment]\"}"`,
			count: 1, kinds: []string{"secret-assignment"},
		},
		{
			name: "existing markers are left alone",
			in:   "token: [REDACTED:github-token] and https://u:[REDACTED:credential-url]@h/",
			want: "token: [REDACTED:github-token] and https://u:[REDACTED:credential-url]@h/",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := String(tc.in)
			if r.Text != tc.want {
				t.Errorf("Text:\n got  %q\n want %q", r.Text, tc.want)
			}
			if r.Count != tc.count {
				t.Errorf("Count = %d, want %d", r.Count, tc.count)
			}
			if !reflect.DeepEqual(r.Kinds, tc.kinds) {
				t.Errorf("Kinds = %v, want %v", r.Kinds, tc.kinds)
			}
			if again := String(r.Text); again.Count != 0 || again.Text != r.Text {
				t.Errorf("not idempotent: second pass %q (%d)", again.Text, again.Count)
			}
		})
	}
}

func TestPassword(t *testing.T) {
	tests := []struct {
		in     string
		redact bool
	}{
		{`password = "hunter2hunter2"`, true},
		{`password: "Tr0ub4dor&3"`, true},
		{`PGPASSWORD=hunter2hunter2 psql`, true},
		{`mysql --password=hunter2hunter2`, true},
		{`password = "short"`, false},
		{`password = "changeme"`, false},
		{`password = "password"`, false},
		{`password = "xxxxxxxx"`, false},
		{`password = "********"`, false},
		{`password = "<password>"`, false},
		{`password = "${DB_PASSWORD}"`, false},
		{`password = "%s"`, false},
		{`password = "example-password"`, false},
		{`password = "dummy123!"`, false},
		{`password = "test1234"`, false},
		{`password: hunter2hunter2`, false}, // unquoted, low entropy: not a literal by the rule
		{`password = hunter2hunter2`, false},
		{`password = user_password`, false},
		{`password_hash = "hunter2hunter2"`, false},
		{`token = "hunter2hunter2"`, false}, // not a password name, low entropy
	}
	for _, tc := range tests {
		r := String(tc.in)
		if got := r.Count > 0; got != tc.redact {
			t.Errorf("String(%q) = %q, redacted=%v want %v", tc.in, r.Text, got, tc.redact)
		}
	}
}

func TestNames(t *testing.T) {
	yes := []string{"password", "PASSWORD", "db_password", "dbPassword", "PGPASSWORD", "passwd",
		"pwd", "secret", "client_secret", "clientSecret", "token", "GITHUB_TOKEN", "accessToken",
		"authtoken", "api_key", "apikey", "api-key", "API_KEY", "apiKey", "X-Api-Key", "APIKey",
		"access_key", "private_key", "secret_key", "SecretKey", "auth", "Authorization",
		"credentials", "--password", "password2", "spring.datasource.password"}
	no := []string{"author", "token_count", "secretName", "password_hash", "tokens", "key",
		"public_key", "primary_key", "cache_key", "tokenizer", "passwordPolicy", "auth_url",
		"token_url", "client_id", "key_file", "private_key_path", "max_tokens"}
	for _, n := range yes {
		if !classifyName(n).secret {
			t.Errorf("classifyName(%q) is not secret", n)
		}
	}
	for _, n := range no {
		if classifyName(n).secret {
			t.Errorf("classifyName(%q) is secret", n)
		}
	}
}

func TestDeterministicAndIdempotent(t *testing.T) {
	var in []string
	for _, c := range readCatch(t) {
		in = append(in, c.line)
	}
	in = append(in, readLines(t, "keep.txt")...)
	joined := strings.Join(in, "\n")
	in = append(in, joined)
	for _, s := range in {
		a, b := String(s), String(s)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic for %q", s)
		}
		if again := String(a.Text); again.Count != 0 || again.Text != a.Text {
			t.Fatalf("not idempotent for %q: %q", s, again.Text)
		}
	}
	// All lines as one text: no secret survives. (Count may be lower than
	// the number of catch lines: the unterminated key swallows the next line.)
	r := String(joined)
	for _, c := range readCatch(t) {
		if secret := secretOf(c.line); strings.Contains(r.Text, secret) {
			t.Errorf("whole corpus: catch.txt:%d secret %q survived", c.lineNo, secret)
		}
	}
}

func TestStrings(t *testing.T) {
	if out, r := Strings(nil); out != nil || r.Count != 0 || r.Kinds != nil || r.Text != "" {
		t.Errorf("Strings(nil) = %v, %+v", out, r)
	}
	if out, r := Strings([]string{}); out == nil || len(out) != 0 || r.Count != 0 {
		t.Errorf("Strings(empty) = %#v, %+v", out, r)
	}
	in := []string{
		"plain",
		"GITHUB_TOKEN=ghp_" + strings.Repeat("aB3dE5fG7h", 4),
		"",
		"https://u:Xk9fQ2mL7pR4@h/ and ghp_" + strings.Repeat("Zy8xW6vU4t", 4),
	}
	orig := slices.Clone(in)
	out, r := Strings(in)
	if !slices.Equal(in, orig) {
		t.Error("Strings modified its input")
	}
	want := []string{"plain", "GITHUB_TOKEN=[REDACTED:github-token]", "",
		"https://u:[REDACTED:credential-url]@h/ and [REDACTED:github-token]"}
	if !slices.Equal(out, want) {
		t.Errorf("Strings = %q, want %q", out, want)
	}
	if r.Count != 3 || !reflect.DeepEqual(r.Kinds, []string{"credential-url", "github-token"}) || r.Text != "" {
		t.Errorf("merged result = %+v", r)
	}
}

// randomText is printable ASCII with plenty of spaces, newlines and the
// punctuation the detectors care about.
func randomText(rng *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" +
		"      \n\t_-.:=/@\"'(){}[]<>$+,;&*#!?~`%^|\\"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.Intn(len(alphabet))]
	}
	return string(b)
}

func TestLargeInputs(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	big := randomText(rng, 1<<20)
	r := String(big)
	if again := String(r.Text); again.Count != 0 {
		t.Errorf("1 MB random text not idempotent")
	}
	// Long runs that could make a careless scanner quadratic.
	adversarial := []string{
		strings.Repeat("a", 1<<20),
		strings.Repeat("sk-", 1<<18),
		strings.Repeat("ghp_", 1<<18),
		strings.Repeat("eyJ", 1<<18),
		strings.Repeat("eyJabcdefghij.", 1<<16),
		strings.Repeat("token=", 1<<17),
		strings.Repeat(`password:"`, 1<<17),
		strings.Repeat("-----BEGIN RSA PRIVATE KEY-----", 1<<15),
		strings.Repeat("-----BEGIN A PRIVATE KEY-----\nMIIEpAIBAAKCAQEAxyz\n-----END B PRIVATE KEY-----\n", 1<<13),
		strings.Repeat("://", 1<<18),
		strings.Repeat("a:b@", 1<<18),
		strings.Repeat("https://u:p", 1<<16),
		strings.Repeat("[REDACTED:", 1<<16),
		strings.Repeat("AKIA", 1<<18),
	}
	for _, s := range adversarial {
		r := String(s)
		if again := String(r.Text); again.Count != 0 {
			t.Errorf("adversarial %q...: not idempotent", s[:20])
		}
	}
	// Many secrets in one big text.
	var b strings.Builder
	n := 0
	for b.Len() < 1<<20 {
		b.WriteString(randomText(rng, 200))
		b.WriteString(" ghp_")
		b.WriteString(strings.Repeat("aB3dE5fG7h", 4))
		b.WriteString(" ")
		n++
	}
	r = String(b.String())
	if r.Count < n || strings.Contains(r.Text, "ghp_aB3dE5fG7h") {
		t.Errorf("many secrets: Count = %d, want >= %d", r.Count, n)
	}
}

func BenchmarkString(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	var sb strings.Builder
	lines := append(readLines(b, "keep.txt"), func() []string {
		var l []string
		for _, c := range readCatch(b) {
			l = append(l, c.line)
		}
		return l
	}()...)
	for sb.Len() < 64<<10 {
		if rng.Intn(4) == 0 {
			sb.WriteString(randomText(rng, 120))
		} else {
			sb.WriteString(lines[rng.Intn(len(lines))])
		}
		sb.WriteByte('\n')
	}
	s := sb.String()[:64<<10]
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		String(s)
	}
}
