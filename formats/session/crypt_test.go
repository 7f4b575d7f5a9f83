package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"filippo.io/age"
)

func decryptAll(ct []byte, pass []byte) ([]byte, error) {
	r, err := Decrypt(bytes.NewReader(ct), pass)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

var stanzaRE = regexp.MustCompile(`(?m)^-> scrypt [A-Za-z0-9+/]{22} (\d+)$`)

func TestEncryptRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 1024, ageChunkSize - 1, ageChunkSize, ageChunkSize + 1, 3*ageChunkSize + 7} {
		plain := jsonl(n)
		ct := encrypt(t, plain)
		if !bytes.HasPrefix(ct, []byte("age-encryption.org/v1\n-> scrypt ")) {
			t.Fatalf("not binary age with one scrypt stanza: %q", ct[:40])
		}
		if m := stanzaRE.FindSubmatch(ct); m == nil || string(m[1]) != "10" {
			t.Fatalf("stanza: %q", ct[:120])
		}
		got, err := decryptAll(ct, testPass)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
}

// The one test that pays for the real work factor (~1 s, 256 MiB).
func TestDefaultWorkFactorIs18(t *testing.T) {
	if DefaultWorkFactor != 18 || MaxWorkFactor != 22 {
		t.Fatal("constants")
	}
	for _, cfg := range []encryptConfig{{}, {allowWeak: true}} {
		if wf, err := resolveWorkFactor(0, cfg); wf != 18 || err != nil {
			t.Fatalf("0 resolves to %d %v", wf, err)
		}
	}
	// The real thing: ~1 s normally, ~35 s under the race detector.
	if testing.Short() || raceEnabled {
		t.Skip("scrypt at logN 18 skipped under -short and -race")
	}
	var b bytes.Buffer
	w, err := Encrypt(&b, testPass, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	w.Close()
	if m := stanzaRE.FindSubmatch(b.Bytes()); m == nil || string(m[1]) != "18" {
		t.Fatalf("header: %q", b.Bytes()[:100])
	}
}

func TestEncryptRefuses(t *testing.T) {
	var sink bytes.Buffer
	tests := []struct {
		name string
		pass []byte
		wf   int
		opts []EncryptOption
		want error
	}{
		{"empty passphrase", nil, testWF, []EncryptOption{AllowWeak()}, ErrEmptyPassphrase},
		{"long passphrase", bytes.Repeat([]byte("p"), MaxPassphraseLen+1), testWF, []EncryptOption{AllowWeak()}, ErrPassphraseTooLong},
		{"weak without option", testPass, 17, nil, ErrWeakWorkFactor},
		{"negative", testPass, -1, []EncryptOption{AllowWeak()}, ErrWeakWorkFactor},
		{"above 22", testPass, 23, nil, ErrWorkFactorTooHigh},
		{"far above", testPass, 31, []EncryptOption{AllowWeak()}, ErrWorkFactorTooHigh},
	}
	for _, tc := range tests {
		if _, err := Encrypt(&sink, tc.pass, tc.wf, tc.opts...); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if sink.Len() != 0 {
		t.Fatal("refused Encrypt wrote bytes")
	}
	if _, err := Encrypt(&sink, bytes.Repeat([]byte("p"), MaxPassphraseLen), 1, AllowWeak()); err != nil {
		t.Fatalf("4096-byte passphrase: %v", err)
	}
}

func TestDecryptErrors(t *testing.T) {
	plain := jsonl(3*ageChunkSize + 100) // four chunks, the last short
	ct := encrypt(t, plain)
	hdrEnd := bytes.Index(ct, []byte("\n---")) + 1
	hdrEnd += bytes.IndexByte(ct[hdrEnd:], '\n') + 1
	payload := hdrEnd + ageNonceSize
	flip := func(i int) []byte {
		c := append([]byte(nil), ct...)
		c[i] ^= 0x01
		return c
	}
	macFlip := append([]byte(nil), ct...)
	macAt := bytes.Index(macFlip, []byte("\n--- ")) + 5
	if macFlip[macAt] == 'A' {
		macFlip[macAt] = 'B'
	} else {
		macFlip[macAt] = 'A'
	}
	x25519, _ := age.GenerateX25519Identity()
	var other bytes.Buffer
	w, _ := age.Encrypt(&other, x25519.Recipient())
	w.Write([]byte("hello"))
	w.Close()
	fullCT := encrypt(t, jsonl(2*ageChunkSize))
	wf23 := bytes.Replace(ct, []byte(" 10\n"), []byte(" 23\n"), 1)
	wfHuge := bytes.Replace(ct, []byte(" 10\n"), []byte(" 99999999999999999999\n"), 1)

	tests := []struct {
		name    string
		ct      []byte
		pass    []byte
		want    []error
		notWant error
	}{
		{"wrong passphrase", ct, []byte("Tr0ub4dor&3"), []error{ErrWrongPassphrase}, nil},
		{"empty passphrase", ct, nil, []error{ErrEmptyPassphrase}, nil},
		{"empty file", nil, testPass, []error{ErrTruncated}, nil},
		{"cut intro", ct[:10], testPass, []error{ErrTruncated}, nil},
		{"cut header", ct[:hdrEnd-20], testPass, []error{ErrTruncated}, nil},
		{"no nonce", ct[:hdrEnd], testPass, []error{ErrTruncated}, ErrTampered},
		{"cut nonce", ct[:hdrEnd+5], testPass, []error{ErrTruncated}, ErrTampered},
		{"no chunk", ct[:payload], testPass, []error{ErrTruncated}, ErrTampered},
		{"cut at chunk boundary", ct[:payload+2*ageEncChunkSize], testPass, []error{ErrTruncated}, ErrTampered},
		{"cut inside last chunk", ct[:len(ct)-1], testPass, []error{ErrTruncated, ErrTampered}, nil},
		{"cut inside first chunk", ct[:payload+1000], testPass, []error{ErrTruncated, ErrTampered}, nil},
		{"flipped byte, full chunk", flip(payload + ageEncChunkSize + 10), testPass, []error{ErrTampered}, ErrTruncated},
		{"flipped byte, last chunk", flip(len(ct) - 3), testPass, []error{ErrTampered}, nil},
		{"flipped nonce", flip(hdrEnd + 2), testPass, []error{ErrTampered}, ErrTruncated},
		{"header MAC", macFlip, testPass, []error{ErrTampered}, ErrTruncated},
		// A byte appended to a short last chunk makes that chunk fail.
		{"trailing data, short last chunk", append(ct[:len(ct):len(ct)], 0), testPass, []error{ErrTampered}, nil},
		{"trailing data, full last chunk", append(fullCT[:len(fullCT):len(fullCT)], 0), testPass, []error{ErrTampered}, ErrTruncated},
		{"armoured", []byte("-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n"), testPass, []error{ErrMalformedCiphertext}, nil},
		{"not age", []byte("hello world, this is plain text\n"), testPass, []error{ErrMalformedCiphertext}, nil},
		{"x25519 file", other.Bytes(), testPass, []error{ErrNotPassphraseEncrypted}, nil},
		{"work factor 23", wf23, testPass, []error{ErrWorkFactorTooHigh}, nil},
		{"work factor overflow", wfHuge, testPass, []error{ErrWorkFactorTooHigh}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := decryptAll(tc.ct, tc.pass)
			wantErr(t, err, tc.want...)
			if tc.notWant != nil && errors.Is(err, tc.notWant) {
				t.Errorf("%q also matches %q", err, tc.notWant)
			}
			if strings.Contains(err.Error(), string(testPass)) || strings.Contains(err.Error(), "Tr0ub4dor") {
				t.Errorf("passphrase in error: %q", err)
			}
			// Whatever came out before the error is authenticated plaintext.
			if !bytes.HasPrefix(plain, out) {
				t.Error("released bytes that are not plaintext")
			}
		})
	}
}

func TestDecryptTwoScryptStanzas(t *testing.T) {
	ct := encrypt(t, []byte("x"))
	i := bytes.Index(ct, []byte("\n---")) + 1
	line := ct[bytes.Index(ct, []byte("-> scrypt")):i]
	doubled := append(append(append([]byte(nil), ct[:i]...), line...), ct[i:]...)
	if _, err := decryptAll(doubled, testPass); !errors.Is(err, ErrNotPassphraseEncrypted) {
		t.Fatal(err)
	}
}

func TestDecryptSourceError(t *testing.T) {
	ct := encrypt(t, jsonl(2*ageChunkSize))
	boom := errors.New("network down")
	for _, cut := range []int{0, 30, 200, len(ct) / 2, len(ct) - 1} {
		r := &failingReader{data: ct[:cut], err: boom}
		_, err := func() ([]byte, error) {
			d, err := Decrypt(r, testPass)
			if err != nil {
				return nil, err
			}
			return io.ReadAll(d)
		}()
		if !errors.Is(err, boom) {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

// The reader accepts logN up to 22 and refuses 23 before any scrypt work.
func TestAgeHeaderWorkFactorBounds(t *testing.T) {
	const salt = "AAAAAAAAAAAAAAAAAAAAAA"
	for _, tc := range []struct {
		wf   string
		want error
		n    int
	}{
		{"1", nil, 1}, {"18", nil, 18}, {"22", nil, 22}, {"23", ErrWorkFactorTooHigh, 0},
		{"0", ErrMalformedCiphertext, 0}, {"018", ErrMalformedCiphertext, 0}, {"-1", ErrMalformedCiphertext, 0}, {"x", ErrMalformedCiphertext, 0},
	} {
		h := "age-encryption.org/v1\n-> scrypt " + salt + " " + tc.wf + "\nAAAA\n--- AAAA\n"
		_, n, err := readAgeHeader(bufio.NewReader(strings.NewReader(h)))
		if tc.want == nil {
			if err != nil || n != tc.n {
				t.Errorf("%s: %d %v", tc.wf, n, err)
			}
		} else if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v", tc.wf, err)
		}
	}
	// An oversized header is refused without reading on.
	src := &countingSource{b: 'A'}
	_, _, err := readAgeHeader(bufio.NewReader(io.MultiReader(strings.NewReader("age-encryption.org/v1\n"), src)))
	if !errors.Is(err, ErrMalformedCiphertext) || src.n > 2*maxAgeHeader {
		t.Fatalf("%v after %d bytes", err, src.n)
	}
}
