package store

import (
	"fmt"
	"os"
	"testing"

	"github.com/git-ctx/git-ctx/internal/s3test"
)

// TestMain isolates every git command of the package's tests (and of child
// processes) from the real home and configuration.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "store-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", home)
	os.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR"} {
		os.Unsetenv(v)
	}
	code := m.Run()
	s3test.StopShared()
	os.RemoveAll(home)
	os.Exit(code)
}
