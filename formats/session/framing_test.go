package session

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testPath = "projects/-Users-x-demo/abc.jsonl"

// 1 KiB JSONL → TAR → WriteSnapshot → age → Decrypt → ReadSnapshot →
// ReadTAR → the same bytes, committed through the temp-file contract.
func TestSnapshotRoundTrip1KiB(t *testing.T) {
	body := jsonl(1024)
	tarBytes := mustTAR(t, testPath, body)
	n, sum, err := HashPayload(bytes.NewReader(tarBytes))
	if err != nil {
		t.Fatal(err)
	}
	env := testEnvelope(testPath, tarBytes)
	if env.Files[0].Size != n || env.Files[0].SHA256 != sum {
		t.Fatal("HashPayload disagrees")
	}

	var plain bytes.Buffer
	if err := WriteSnapshot(&plain, env, bytes.NewReader(tarBytes), n); err != nil {
		t.Fatal(err)
	}
	// Framing is exactly line + "\n" + TAR bytes.
	line, _ := env.Marshal()
	if want := append(append(line, '\n'), tarBytes...); !bytes.Equal(plain.Bytes(), want) {
		t.Fatal("plaintext framing differs")
	}

	var ct bytes.Buffer
	w, err := Encrypt(&ct, testPass, testWF, AllowWeak())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSnapshot(w, env, bytes.NewReader(tarBytes), n); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	got, err := restore(dir, ct.Bytes(), testPass)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Match(Expect{SnapshotID: env.SnapshotID, Agent: env.Agent, SessionID: env.SessionID, ProjectID: env.ProjectID}); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "out"))
	if !bytes.Equal(out, body) {
		t.Fatal("restored body differs")
	}
}

func TestWriteSnapshotErrors(t *testing.T) {
	tarBytes := mustTAR(t, testPath, jsonl(100))
	n := int64(len(tarBytes))
	tampered := append([]byte(nil), tarBytes...)
	tampered[600] ^= 1
	tests := []struct {
		name    string
		mod     func(*Envelope)
		payload []byte
		size    int64
		want    error
		wrote   bool
	}{
		{"invalid envelope", func(e *Envelope) { e.Kind = "x" }, tarBytes, n, ErrUnexpectedKind, false},
		{"uppercase sha", func(e *Envelope) { e.Files[0].SHA256 = strings.ToUpper(e.Files[0].SHA256) }, tarBytes, n, ErrInvalidPayloadHash, false},
		{"size argument", func(*Envelope) {}, tarBytes, n + 1, ErrPayloadSizeMismatch, false},
		{"short payload", func(*Envelope) {}, tarBytes[:n-1], n, ErrPayloadSizeMismatch, true},
		{"long payload", func(*Envelope) {}, append(tarBytes[:n:n], 0), n, ErrPayloadSizeMismatch, true},
		{"wrong hash", func(*Envelope) {}, tampered, n, ErrPayloadHashMismatch, true},
		{"credential path", func(e *Envelope) { e.Files[0].Path = "projects/x/credentials.json" }, tarBytes, n, ErrCredentialPath, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnvelope(testPath, tarBytes)
			tc.mod(&env)
			var out bytes.Buffer
			err := WriteSnapshot(&out, env, bytes.NewReader(tc.payload), tc.size)
			wantErr(t, err, tc.want)
			if (out.Len() > 0) != tc.wrote {
				t.Errorf("wrote %d bytes", out.Len())
			}
			line, _ := env.Marshal()
			if out.Len() > len(line)+1+int(n) {
				t.Errorf("wrote more than the declared payload")
			}
		})
	}
}

// readPlain runs ReadSnapshot over a plaintext and drains the payload.
func readPlain(plain []byte) (*Envelope, []byte, error) {
	env, payload, err := ReadSnapshot(bytes.NewReader(plain))
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(payload)
	return env, b, err
}

func TestReadSnapshotFraming(t *testing.T) {
	tarBytes := mustTAR(t, testPath, jsonl(300))
	env := testEnvelope(testPath, tarBytes)
	good := plaintext(t, env, tarBytes)
	line := good[:bytes.IndexByte(good, '\n')]

	upper := env
	upper.Files = []FileDescriptor{env.Files[0]}
	upper.Files[0].SHA256 = strings.ToUpper(upper.Files[0].SHA256)

	pad := func(total int) []byte { // a valid envelope line of total bytes incl. "\n"
		extra := total - len(line) - 1 - len(`,"x":""`)
		l := append([]byte(nil), line[:len(line)-1]...)
		l = append(l, `,"x":"`+strings.Repeat("p", extra)+`"}`+"\n"...)
		return append(l, tarBytes...)
	}
	tampered := append([]byte(nil), good...)
	tampered[len(line)+1+700] ^= 1

	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"ok", good, nil},
		{"uppercase sha accepted", plaintext(t, upper, tarBytes), nil},
		{"line at 1 MiB", pad(MaxMetadataLine), nil},
		{"line over 1 MiB", pad(MaxMetadataLine + 1), ErrMetadataTooLarge},
		{"no newline, long", bytes.Repeat([]byte("{"), MaxMetadataLine+10), ErrMetadataTooLarge},
		{"empty", nil, ErrMetadataTruncated},
		{"no newline", line, ErrMetadataTruncated},
		{"not JSON", append([]byte("hello\n"), tarBytes...), ErrInvalidMetadata},
		{"invalid envelope", []byte(strings.Replace(string(good), `"schema_version":1`, `"schema_version":2`, 1)), ErrUnsupportedSchema},
		{"payload short", good[:len(good)-1], ErrPayloadSizeMismatch},
		{"payload missing", good[:len(line)+1], ErrPayloadSizeMismatch},
		{"payload long", append(good[:len(good):len(good)], 0), ErrPayloadSizeMismatch},
		{"payload tampered", tampered, ErrPayloadHashMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, payload, err := readPlain(tc.in)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(payload, tarBytes) || e.SessionID != "abc" {
					t.Fatal("payload")
				}
				return
			}
			wantErr(t, err, tc.want)
		})
	}
}

// The metadata line is bounded while it is read.
func TestReadSnapshotBoundedLine(t *testing.T) {
	src := &countingSource{b: 'x'}
	if _, _, err := ReadSnapshot(src); !errors.Is(err, ErrMetadataTooLarge) {
		t.Fatal(err)
	}
	if src.n > MaxMetadataLine+128<<10 {
		t.Fatalf("read %d bytes of an endless line", src.n)
	}
}

func TestReadSnapshotStrict(t *testing.T) {
	tarBytes := mustTAR(t, testPath, jsonl(10))
	good := plaintext(t, testEnvelope(testPath, tarBytes), tarBytes)
	dup := []byte(strings.Replace(string(good), `"agent":"claude"`, `"agent":"codex","agent":"claude"`, 1))
	if _, _, err := ReadSnapshot(bytes.NewReader(dup)); err != nil {
		t.Fatalf("lenient: %v", err)
	}
	if _, _, err := ReadSnapshotStrict(bytes.NewReader(dup)); !errors.Is(err, ErrStrictJSON) {
		t.Fatalf("strict: %v", err)
	}
	if _, _, err := ReadSnapshotStrict(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
}

// Every rejection through the whole pipeline leaves nothing committed.
func TestRejectionsCommitNothing(t *testing.T) {
	body := jsonl(2 * ageChunkSize) // several age chunks: data flows before the failure
	tarBytes := mustTAR(t, testPath, body)
	env := testEnvelope(testPath, tarBytes)
	good := encrypt(t, plaintext(t, env, tarBytes))

	hostile := func(hdrs ...*tar.Header) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, h := range hdrs {
			tw.WriteHeader(h)
			if h.Typeflag == tar.TypeReg {
				tw.Write(body[:h.Size])
			}
		}
		tw.Close()
		return encrypt(t, plaintext(t, testEnvelope(testPath, b.Bytes()), b.Bytes()))
	}
	tamperedTAR := append([]byte(nil), tarBytes...)
	tamperedTAR[512+ageChunkSize+5] ^= 0x20 // a JSONL byte in the second age chunk
	bigLine := testEnvelope(testPath, tarBytes)
	bigLine.SourcePlatform = strings.Repeat("z", MaxMetadataLine)

	tests := []struct {
		name string
		ct   []byte
		pass []byte
		want []error
	}{
		{"wrong passphrase", good, []byte("wrong"), []error{ErrWrongPassphrase}},
		{"truncated ciphertext", good[:len(good)-100], testPass, []error{ErrTruncated}},
		{"truncated at chunk boundary", good[:firstChunk(good)+ageEncChunkSize], testPass, []error{ErrTruncated}},
		{"tampered TAR byte", encrypt(t, plaintext(t, env, tamperedTAR)), testPass, []error{ErrPayloadHashMismatch}},
		{"oversized metadata line", encrypt(t, plaintext(t, bigLine, tarBytes)), testPass, []error{ErrMetadataTooLarge}},
		{"../ TAR name", hostile(reg("../abc.jsonl", 100)), testPass, []error{ErrPathTraversal}},
		{"absolute TAR name", hostile(reg("/home/x/.bashrc", 100)), testPass, []error{ErrPathAbsolute}},
		{"symlink entry", hostile(&tar.Header{Typeflag: tar.TypeSymlink, Name: testPath, Linkname: "/etc/passwd"}), testPass, []error{ErrTARSymlink}},
		{"second entry", hostile(reg(testPath, 100), reg("projects/x/evil.jsonl", 100)), testPass, []error{ErrTARSecondEntry}},
		{"name mismatch", hostile(reg("projects/other/abc.jsonl", 100)), testPass, []error{ErrTARNameMismatch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env, err := restore(dir, tc.ct, tc.pass)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Fatalf("%q is not %q", err, w)
				}
			}
			if env != nil {
				t.Fatal("returned an envelope")
			}
			assertNothingCommitted(t, dir)
		})
	}

	dir := t.TempDir()
	if _, err := restore(dir, good, testPass); err != nil {
		t.Fatalf("control: %v", err)
	}
}

// firstChunk returns the ciphertext offset of an age file's first chunk.
func firstChunk(ct []byte) int {
	i := bytes.Index(ct, []byte("\n---")) + 1
	return i + bytes.IndexByte(ct[i:], '\n') + 1 + ageNonceSize
}
