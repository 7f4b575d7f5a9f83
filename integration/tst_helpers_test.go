package integration

import "testing"

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
