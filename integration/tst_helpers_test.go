package integration

import (
	"encoding/json"
	"sync"
	"testing"
)

// tstDrainErrors reports every message of errs (closed by the caller once
// its writers are done) as a test error, and stops the test if there was
// any.
func tstDrainErrors(t *testing.T, errs <-chan string) {
	t.Helper()
	for e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// ddWorkers starts workers goroutines counted by wg; worker w calls
// step(w, i) for i from 0 to each-1, once start is closed (at once when
// start is nil).
func ddWorkers(wg *sync.WaitGroup, start <-chan struct{}, workers, each int, step func(w, i int)) {
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if start != nil {
				<-start
			}
			for i := 0; i < each; i++ {
				step(w, i)
			}
		}(w)
	}
}

// tstNewRepo is a new sandbox holding one repository ("repo", with a first
// commit) and the environment of its device "dev".
func tstNewRepo(t *testing.T) (*sandbox, string, []string) {
	t.Helper()
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	return s, repo, s.env("dev")
}

// tstWantFileText fails the test (saying what, then the content) unless
// the file at path holds exactly want.
func tstWantFileText(t *testing.T, path, want, what string) {
	t.Helper()
	if got := string(readFile(t, path)); got != want {
		t.Fatalf("%s:\n%s", what, got)
	}
}

// tstJSONListHas decodes out, a JSON array of objects, and says whether one
// of them has the string want, exactly, at field.
func tstJSONListHas(t *testing.T, out, field, want string) bool {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if v, ok := e[field].(string); ok && v == want {
			return true
		}
	}
	return false
}
