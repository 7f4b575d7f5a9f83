package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeTour runs the README's tour, exactly as written, against temp
// repositories, and checks what it prints: the README cannot rot.
func TestReadmeTour(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- tour:begin -->\\s*```sh\\n(.*?)```\\s*<!-- tour:end -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no tour block")
	}
	script := string(m[1])
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o755)
	cfg := filepath.Join(home, ".gitconfig")
	os.WriteFile(cfg, []byte("[user]\n\tname = Tour\n\temail = tour@example.org\n[init]\n\tdefaultBranch = main\n"), 0o644)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = []string{
		"HOME=" + home, "GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1",
		"XDG_DATA_HOME=" + filepath.Join(tmp, "xdg"), "TMPDIR=" + tmp, "LC_ALL=C",
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README tour failed: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"Initialised memory branch ghyll/memory",
		"post-commit: installed",
		"decided: refresh tokens expire after 7 days",
		"auth: switch to JWT",
		"Pushed ghyll/memory to origin",
		": +2 checkpoints, verified",
		"[refresh] [tokens]",
		"Merged 1 checkpoints from origin",
		"+ checkpoint",
		"verified: teammate: added token rotation",
		"verified 3 checkpoints in 2 chains",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("tour output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("tour output:\n%s", text)
	}
}
