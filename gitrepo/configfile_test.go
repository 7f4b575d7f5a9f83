package gitrepo

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// gitConfigOfFile is what git itself reads from one configuration file:
// ok is false when git refuses the file.
func gitConfigOfFile(t testing.TB, content []byte) (map[string][]string, bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, content, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "-z", "--list", "--file", f)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+t.TempDir())
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stdout.Len() == 0 {
			return map[string][]string{}, true // an empty file, on some versions
		}
		return nil, false
	}
	return ParseConfigList(stdout.Bytes()), true
}

// ourConfigOfFile is what the in-process reader makes of the same bytes.
func ourConfigOfFile(content []byte) (map[string][]string, error) {
	m := map[string][]string{}
	err := parseConfigFile(content, func(k, v string) { m[k] = append(m[k], v) })
	return m, err
}

// configCases are configuration files with the syntax git accepts and
// refuses, including every rule the reader implements.
var configCases = []struct {
	name    string
	content string
	unsure  bool // the reader hands this file to git (git may accept it)
}{
	{"empty", "", false},
	{"bom", "\xef\xbb\xbf[core]\n\tbare = false\n", false},
	{"basic", "[core]\n\tbare = false\n\tfilemode = true\n[user]\n\temail = a@b.example\n", false},
	{"case folding", "[Ctx]\n\tRepoId = X\n[Remote \"Up\"]\n\tURL = u\n", false},
	{"legacy subsection", "[remote.Origin]\n\turl = x\n", false},
	{"no value", "[ctx]\n\tflag\n\tempty =\n\tspace = \n", false},
	{"comments", "# top\n; also\n[ctx] ; c\n\tk = v # trailing\n\tq = \"a # not\" ; yes\n", false},
	{"key on header line", "[ctx] k = v\n", false},
	{"spaces inside", "[ctx]\n\tk =   a  b\t\tc   \n", false},
	{"quotes", "[ctx]\n\tk = \"  padded  \"\n\tj = a\" b \"c\n", false},
	{"escapes", "[ctx]\n\tk = a\\tb\\nc\\\\d\\\"e\\bf\n", false},
	{"continuation", "[ctx]\n\tk = one \\\n  two\n", false},
	{"crlf", "[ctx]\r\n\tk = v\r\n\tj = \"w\"\r\n", false},
	{"lone cr", "[ctx]\n\tk = a\rb\n", false},
	{"subsection escapes", "[remote \"a\\\"b\\\\c\\d\"]\n\turl = x\n", false},
	{"subsection spaces", "[remote    \"x y\"]\n\turl = z\n", false},
	{"dashes and digits", "[my-sec]\n\tkey-2 = v\n", false},
	{"repeated", "[ctx]\n\tk = 1\n[ctx]\n\tk = 2\n", false},
	{"no final newline", "[ctx]\n\tk = v", false},
	{"include", "[include]\n\tpath = other\n", true},
	{"includeIf", "[includeIf \"gitdir:/x/\"]\n\tpath = other\n", true},
	{"unknown escape", "[ctx]\n\tk = a\\qb\n", true},
	{"unterminated quote", "[ctx]\n\tk = \"abc\n", true},
	{"key without section", "k = v\n", true},
	{"bad key char", "[ctx]\n\tk_x = v\n", true},
	{"key starting with digit", "[ctx]\n\t1k = v\n", true},
	{"comment after bare key", "[ctx]\n\tflag ; c\n", true},
	{"bad header", "[ctx\n\tk = v\n", true},
	{"empty header", "[]\n\tk = v\n", true},
	{"space in header", "[ctx ]\n\tk = v\n", true},
	{"dotted with subsection", "[a.b \"c\"]\n\tk = v\n", true},
	{"header junk", "[ctx \"x\" ]\n\tk = v\n", true},
}

// TestConfigFileMatchesGit checks the reader against git on every case:
// where the reader answers, its entries equal git's exactly; where git
// refuses a file, the reader does not answer either.
func TestConfigFileMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git executable not found")
	}
	for _, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			want, gitOK := gitConfigOfFile(t, []byte(tc.content))
			got, err := ourConfigOfFile([]byte(tc.content))
			if tc.unsure {
				if !errors.Is(err, errConfigUnsure) {
					t.Fatalf("reader answered %q (git ok=%v), want errConfigUnsure", got, gitOK)
				}
				return
			}
			if err != nil {
				t.Fatalf("reader: %v (git ok=%v, git: %q)", err, gitOK, want)
			}
			if !gitOK {
				t.Fatalf("git refuses this file, the reader made %q of it", got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("reader %q\n   git %q", got, want)
			}
		})
	}
}

// FuzzConfigFile compares the reader with git on mutated files: whenever
// the reader answers, git must accept the file and agree entry for entry.
//
// fuzz-smoke: 300x
func FuzzConfigFile(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git executable not found")
	}
	for _, tc := range configCases {
		f.Add([]byte(tc.content))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) > 4096 {
			return
		}
		got, err := ourConfigOfFile(content)
		if err != nil {
			if !errors.Is(err, errConfigUnsure) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		want, gitOK := gitConfigOfFile(t, content)
		if !gitOK {
			t.Fatalf("git refuses %q, the reader made %q of it", content, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("file %q\nreader %q\n   git %q", content, got, want)
		}
	})
}
