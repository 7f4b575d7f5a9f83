package testrepo

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// Record is a checkpoint as git-ctx prints it.
type Record struct {
	V          int       `json:"v"`
	Hash       string    `json:"hash"`
	Parent     string    `json:"parent"`
	Device     string    `json:"device"`
	Author     string    `json:"author"`
	TS         int64     `json:"ts"`
	Repo       string    `json:"repo"`
	Branch     string    `json:"branch"`
	Session    string    `json:"session"`
	Turn       int       `json:"turn"`
	Model      string    `json:"model"`
	Summary    string    `json:"summary"`
	Emb        []float64 `json:"emb"`
	Files      []string  `json:"files"`
	Tools      []string  `json:"tools"`
	Injections []string  `json:"injections"`
	Sig        string    `json:"sig"`
}

// ZeroHash is the parent of a device's first checkpoint.
const ZeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// HexHash matches a checkpoint hash.
var HexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// HashesOf is the hashes of cps, in order.
func HashesOf(cps ...Record) []string {
	out := make([]string, len(cps))
	for i, c := range cps {
		out[i] = c.Hash
	}
	return out
}

// DecodeRecord decodes one checkpoint; its hash must be 64 hex characters.
func DecodeRecord(t testing.TB, data []byte) Record {
	t.Helper()
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("decode checkpoint: %v\n%s", err, data)
	}
	if !HexHash.MatchString(r.Hash) {
		t.Fatalf("checkpoint hash %q is not 64 hex characters", r.Hash)
	}
	return r
}

// StatusInfo is `git ctx status --json`.
type StatusInfo struct {
	Initialized       bool   `json:"initialized"`
	Branch            string `json:"branch"`
	Tip               string `json:"tip"`
	Layout            string `json:"layout"`
	Device            string `json:"device"`
	Fingerprint       string `json:"fingerprint"`
	KeyPublished      bool   `json:"key_published"`
	RepoID            string `json:"repo_id"`
	Remote            string `json:"remote"`
	Checkpoints       int    `json:"checkpoints"`
	DeviceCheckpoints int    `json:"device_checkpoints"`
	Devices           int    `json:"devices"`
}

// VerifyReport is the part of `git ctx verify --json` the tests read;
// the rest is kept in Raw so assertions can search it.
type VerifyReport struct {
	OK     bool   `json:"ok"`
	Commit string `json:"commit"`
	Layout string `json:"layout"`
	Chains []struct {
		Repo     string          `json:"repo"`
		Device   string          `json:"device"`
		Entries  int             `json:"entries"`
		Verified int             `json:"verified"`
		Failure  json.RawMessage `json:"failure"`
	} `json:"chains"`
	Problems []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"problems"`
	Raw string `json:"-"`
}

// DecodeVerify decodes the output of `git ctx verify --json` that exited
// with r.Code, and fails unless the exit code agrees with ok (0 for ok, 1
// otherwise).
func DecodeVerify(t testing.TB, r Result) VerifyReport {
	t.Helper()
	var rep VerifyReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("decode verify --json: %v\n%s", err, r)
	}
	rep.Raw = r.Stdout
	if rep.OK != (r.Code == 0) || (r.Code != 0 && r.Code != 1) {
		t.Fatalf("verify --json: ok=%v but %s", rep.OK, r)
	}
	return rep
}

// WantVerifiedSummary fails unless sums (summary → verified, as a device's
// `git ctx log --json` lists them) holds a verified record whose summary
// contains want.
func WantVerifiedSummary(t testing.TB, device string, sums map[string]bool, want string) {
	t.Helper()
	for s, v := range sums {
		if strings.Contains(s, want) {
			if !v {
				t.Fatalf("device %s: the record %q is not verified", device, s)
			}
			return
		}
	}
	t.Fatalf("device %s: no record contains %q: %v", device, want, sums)
}

// FileResult is one element of `git ctx verify FILE… --json`.
type FileResult struct {
	File   string `json:"file"`
	Format string `json:"format"`
	Valid  bool   `json:"valid"`
	ID     string `json:"id"`
	Error  string `json:"error"`
}

// DecodeVerifyFile decodes the output of `git ctx verify FILE --json` (r),
// which must name exactly one file.
func DecodeVerifyFile(t testing.TB, file string, r Result) FileResult {
	t.Helper()
	var res []FileResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || len(res) != 1 {
		t.Fatalf("verify %s --json: %v\n%s", file, err, r)
	}
	return res[0]
}
