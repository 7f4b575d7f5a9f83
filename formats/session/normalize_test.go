package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

var posixMap = &PathMap{
	Home: "/home/alice",
	Projects: []Root{
		{ID: "local/demo", Path: "/home/alice/code/demo"},
		{ID: "github.com/acme/app", Path: "/home/alice/code/demo/vendor/app"}, // nested: longest wins
		{ID: "linked", Path: "/home/alice/link", Resolved: "/data/real"},
		{ID: "bad}id", Path: "/home/alice/bad"}, // ignored
	},
	Work: []Root{{ID: "scratch", Path: "/srv/scratch"}},
}

var winMap = &PathMap{
	Home:     `C:\Users\Alice`,
	Projects: []Root{{ID: "local/demo", Path: `C:\Users\Alice\code\demo`}},
	Windows:  true,
}

func TestPathKeys(t *testing.T) {
	if got := PathKeys(AgentClaude); !reflect.DeepEqual(got, []string{"cwd", "file", "filePath", "file_path", "filename", "path", "projectPath", "project_path", "workdir", "workingDirectory"}) {
		t.Fatal(got)
	}
	if got := PathKeys(AgentCodex); !reflect.DeepEqual(got, []string{"cwd", "filePath", "file_path", "path", "workdir", "workingDirectory"}) {
		t.Fatal(got)
	}
	if PathKeys("x") != nil || IsPathKey(AgentCodex, "file") || !IsPathKey(AgentClaude, "file") || IsPathKey(AgentClaude, "CWD") {
		t.Fatal("allow-list")
	}
}

func TestLooksLikePath(t *testing.T) {
	tests := []struct {
		v             string
		claude, codex bool
	}{
		{"/home/a", true, true},
		{"${HOME}/x", true, true},
		{`C:\Users`, true, true},
		{"c:/x", true, true},
		{"C:", false, false},
		{"C:x", false, false},
		{"1:/x", false, false},
		{"relative/x", false, false},
		{"", false, false},
		{"~/x", false, false},
		{"/a\nb", false, true},
		{"https://x", false, false},
	}
	for _, tc := range tests {
		if LooksLikePath(AgentClaude, tc.v) != tc.claude || LooksLikePath(AgentCodex, tc.v) != tc.codex {
			t.Errorf("%q", tc.v)
		}
	}
	if LooksLikePath("other", "/x") {
		t.Error("unknown agent")
	}
}

func TestNormalizePathPOSIX(t *testing.T) {
	tests := map[string]string{
		"/home/alice/code/demo":                   "${REPO:local/demo}",
		"/home/alice/code/demo/":                  "${REPO:local/demo}",
		"/home/alice/code/demo/src/a.go":          "${REPO:local/demo}/src/a.go",
		"/home/alice/code/demo//src/./b/../a.go":  "${REPO:local/demo}/src/a.go",
		"/home/alice/code/demo/vendor/app/x":      "${REPO:github.com/acme/app}/x",
		"/home/alice/code/demonstration":          "${HOME}/code/demonstration",
		"/data/real/x":                            "${REPO:linked}/x",
		"/home/alice/link/x":                      "${REPO:linked}/x",
		"/home/alice/bad/x":                       "${HOME}/bad/x",
		"/srv/scratch/y":                          "${WORK:scratch}/y",
		"/home/alice":                             "${HOME}",
		"/home/alice/.claude/x":                   "${HOME}/.claude/x",
		"/home/alicex":                            "/home/alicex",
		"/etc/../etc/passwd":                      "/etc/passwd",
		`/home/bob/odd\name`:                      `/home/bob/odd\name`, // POSIX: '\' is a file name byte
		`/home/alice/odd\name`:                    `${HOME}/odd\name`,
		`C:\Users\x`:                              "C:/Users/x",
		"${HOME}/../x":                            "${HOME}/../x", // already a token: untouched
		"${REPO:other}/x":                         "${REPO:other}/x",
		"/home/alice/code/demo/${weird}/../a.txt": "${REPO:local/demo}/a.txt",
	}
	for in, want := range tests {
		if got := posixMap.NormalizePath(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	var nilMap *PathMap
	if got := nilMap.NormalizePath("/a//b"); got != "/a/b" {
		t.Error(got)
	}
	root := &PathMap{Projects: []Root{{ID: "all", Path: "/"}}}
	if got := root.NormalizePath("/x/y"); got != "${REPO:all}/x/y" {
		t.Error(got)
	}
	if got := root.NormalizePath("/"); got != "${REPO:all}" {
		t.Error(got)
	}
}

func TestNormalizePathWindows(t *testing.T) {
	tests := map[string]string{
		`C:\Users\Alice\code\demo\src\a.go`: "${REPO:local/demo}/src/a.go",
		`c:/users/alice/CODE/demo/x`:        "${REPO:local/demo}/x", // case-insensitive
		`C:\Users\Alice\Desktop`:            "${HOME}/Desktop",
		`D:\data\x\..\y`:                    "D:/data/y",
		"/mnt/c/x":                          "/mnt/c/x",
		`\\server\share\dir\f`:              "//server/share/dir/f",
	}
	for in, want := range tests {
		if got := winMap.NormalizePath(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestExpandPath(t *testing.T) {
	posix := map[string]string{
		"${REPO:local/demo}":                 "/home/alice/code/demo",
		"${REPO:local/demo}/src/a.go":        "/home/alice/code/demo/src/a.go",
		"${REPO:github.com/acme/app}/x":      "/home/alice/code/demo/vendor/app/x",
		"${REPO:linked}/x":                   "/home/alice/link/x",
		"${REPO:unmapped}/x":                 "${REPO:unmapped}/x",
		"${REPO:local/demo}x":                "${REPO:local/demo}x",
		"prefix ${REPO:local/demo}/x":        "prefix ${REPO:local/demo}/x", // anchored (rc.8 is not)
		"${REPO:}/x":                         "${REPO:}/x",
		"${REPO:local/demo":                  "${REPO:local/demo",
		"${HOME}":                            "/home/alice",
		"${HOME}/.codex/x":                   "/home/alice/.codex/x",
		"${HOMEx}/y":                         "${HOMEx}/y",
		"${WORK:scratch}/y":                  "/srv/scratch/y",
		"${OTHER}/../x":                      "${OTHER}/../x",
		"/etc/x/../passwd":                   "/etc/x/../passwd", // POSIX: non-token values are kept
		"C:/Users/x":                         "C:/Users/x",
		"${REPO:local/demo}/../../../etc/pw": "/home/etc/pw",
	}
	for in, want := range posix {
		if got := posixMap.ExpandPath(in); got != want {
			t.Errorf("posix %q → %q, want %q", in, got, want)
		}
	}
	win := map[string]string{
		"${REPO:local/demo}/src/a.go": `C:\Users\Alice\code\demo\src\a.go`,
		"${HOME}/Desktop":             `C:\Users\Alice\Desktop`,
		"C:/Users/x":                  `C:\Users\x`,
		"/home/bob/x":                 `\home\bob\x`,
		"${REPO:nope}/x":              "${REPO:nope}/x",
	}
	for in, want := range win {
		if got := winMap.ExpandPath(in); got != want {
			t.Errorf("windows %q → %q, want %q", in, got, want)
		}
	}
	if got := (&PathMap{}).ExpandPath("${HOME}/x"); got != "${HOME}/x" {
		t.Error("no home:", got)
	}
}

// Weakness #1: everything but the rewritten string stays byte-identical.
func TestNormalizeLineByteExact(t *testing.T) {
	in := "{\"z\":1.0,\"big\":12345678901234567890,\"e\":1e21,\"html\":\"<a>&\",\"ls\":\"\u2028\",\"esc\":\"\\u00e9\\/\"," +
		"\"cwd\":\"/home/alice/code/demo/src\",\"bad\":\"\xff\",\"dup\":1,\"dup\":2 , \"arr\":[\"/home/alice/x\",{\"file\":\"/home/alice/y\"}]," +
		"\"nested\":{\"path\":\"\\/home\\/alice\\/z\"},\"cwd2\":\"/home/alice\",\"c\\u0077d\":\"/home/alice/w\"}\r\n"
	want := "{\"z\":1.0,\"big\":12345678901234567890,\"e\":1e21,\"html\":\"<a>&\",\"ls\":\"\u2028\",\"esc\":\"\\u00e9\\/\"," +
		"\"cwd\":\"${REPO:local/demo}/src\",\"bad\":\"\xff\",\"dup\":1,\"dup\":2 , \"arr\":[\"/home/alice/x\",{\"file\":\"${HOME}/y\"}]," +
		"\"nested\":{\"path\":\"${HOME}/z\"},\"cwd2\":\"/home/alice\",\"c\\u0077d\":\"${HOME}/w\"}\r\n"
	got, err := NormalizeLine(AgentClaude, posixMap, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	back, err := ExpandLine(AgentClaude, posixMap, got)
	if err != nil {
		t.Fatal(err)
	}
	wantBack := strings.NewReplacer(`"${REPO:local/demo}/src"`, `"/home/alice/code/demo/src"`, `"${HOME}/y"`, `"/home/alice/y"`,
		`"${HOME}/z"`, `"/home/alice/z"`, `"${HOME}/w"`, `"/home/alice/w"`).Replace(want)
	if string(back) != wantBack {
		t.Fatalf("expand: %q", back)
	}
}

func TestNormalizeLineUnchanged(t *testing.T) {
	lines := []string{
		"",
		"\n",
		"   \r\n",
		"not json at all /home/alice\n",
		`{"cwd":"/home/alice"` + "\n", // truncated JSON: verbatim, as rc.8 keeps it
		`{"message":"/home/alice/code/demo","n":12345678901234567890,"f":1.50}` + "\n",
		`["/home/alice/x"]`,
		`"/home/alice"`,
		`{"cwd":"relative/dir","path":42,"file":null,"filePath":["/home/alice"]}`,
		`{"cwd":"/home/bob"}`,                       // outside every root, already clean
		`{"cwd":"\ud800/home/alice"}`,               // lone surrogate: not decodable losslessly
		"{\"cwd\":\"/home/alice/\xff\"}",            // invalid UTF-8 in the value
		`{"CWD":"/home/alice","Cwd":"/home/alice"}`, // keys are case-sensitive
	}
	for _, l := range lines {
		got, err := NormalizeLine(AgentClaude, posixMap, []byte(l))
		if err != nil || string(got) != l {
			t.Errorf("%q → %q %v", l, got, err)
		}
	}
	buf := []byte(`{"a":"b"}`)
	if got, _ := NormalizeLine(AgentCodex, posixMap, buf); &got[0] != &buf[0] {
		t.Error("unchanged line was copied")
	}
}

func TestNormalizeLineAgents(t *testing.T) {
	l := []byte(`{"file":"/home/alice/a","cwd":"/home/alice/b\nc","workdir":"/home/alice/d"}`)
	claude, _ := NormalizeLine(AgentClaude, posixMap, l)
	codex, _ := NormalizeLine(AgentCodex, posixMap, l)
	if string(claude) != `{"file":"${HOME}/a","cwd":"/home/alice/b\nc","workdir":"${HOME}/d"}` {
		t.Errorf("claude %s", claude)
	}
	if string(codex) != `{"file":"/home/alice/a","cwd":"${HOME}/b\nc","workdir":"${HOME}/d"}` {
		t.Errorf("codex %s", codex)
	}
	if _, err := NormalizeLine("gemini", posixMap, l); !errors.Is(err, ErrUnknownAgent) {
		t.Error(err)
	}
	if _, err := NormalizeLine(AgentClaude, posixMap, make([]byte, MaxRecordSize+1)); !errors.Is(err, ErrRecordTooLarge) {
		t.Error(err)
	}
}

// TestAppendJSONString: a rewritten value is written with serde's escapes
// (serdejson.AppendRawString).
func TestAppendJSONString(t *testing.T) {
	in := "a\"b\\c\b\f\n\r\t\x00\x1f\x7f<>&\u2028/é"
	got := string(serdejson.AppendRawString(nil, in))
	want := `"a\"b\\c\b\f\n\r\t\u0000\u001f` + "\x7f" + `<>&` + "\u2028" + `/é"`
	if got != want {
		t.Fatalf("%q\n%q", got, want)
	}
	var back string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back != in {
		t.Fatal(back, err)
	}
}

func TestRewriteLineEscapes(t *testing.T) {
	// A surrogate pair and every short escape decode to the value fn sees.
	line := []byte(`{"k":"\ud83d\ude00\"\\\/\b\f\n\r\t\u0041"}`)
	var seen string
	out, err := RewriteLine(line, func(k, v string) (string, bool) { seen = v; return "", false })
	if err != nil || !bytes.Equal(out, line) {
		t.Fatal(err)
	}
	if seen != "😀\"\\/\b\f\n\r\tA" {
		t.Fatalf("%q", seen)
	}
}

func TestTransformRecords(t *testing.T) {
	in := "{\"cwd\":\"/home/alice/a\"}\r\nplain text\n\n{\"cwd\":\"/home/alice/b\"}"
	var out bytes.Buffer
	err := TransformRecords(&out, strings.NewReader(in), func(r []byte) ([]byte, error) {
		return NormalizeLine(AgentCodex, posixMap, r)
	})
	want := "{\"cwd\":\"${HOME}/a\"}\r\nplain text\n\n{\"cwd\":\"${HOME}/b\"}"
	if err != nil || out.String() != want {
		t.Fatalf("%q %v", out.String(), err)
	}

	// A record of exactly 16 MiB passes; one byte more is refused while
	// reading, without reading the rest.
	exact := append(bytes.Repeat([]byte("a"), MaxRecordSize-1), '\n')
	n := 0
	if err := TransformRecords(io.Discard, bytes.NewReader(exact), func(r []byte) ([]byte, error) { n = len(r); return r, nil }); err != nil || n != MaxRecordSize {
		t.Fatal(n, err)
	}
	src := &countingSource{b: 'a'}
	if err := TransformRecords(io.Discard, src, func(r []byte) ([]byte, error) { return r, nil }); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatal(err)
	}
	if src.n > MaxRecordSize+128<<10 {
		t.Fatalf("read %d bytes", src.n)
	}
	boom := errors.New("boom")
	if err := TransformRecords(io.Discard, &failingReader{[]byte("partial"), boom}, func(r []byte) ([]byte, error) {
		t.Fatal("partial record passed on")
		return r, nil
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
}
