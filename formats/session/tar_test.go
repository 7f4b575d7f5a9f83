package session

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// §5.1: one regular entry, USTAR, mode 0600, uid/gid 0, empty names, two
// trailer blocks, no record padding; sizes 2048 and 4608.
func TestWriteTARLayout(t *testing.T) {
	name := "projects/-Users-x-demo/abc.jsonl"
	for _, tc := range []struct{ body, total int }{{3, 2048}, {0, 1536}, {512, 2048}, {513, 2560}, {3000, 4608}} {
		body := jsonl(tc.body)
		got := mustTAR(t, name, body)
		if len(got) != tc.total {
			t.Fatalf("body %d: %d bytes, want %d", tc.body, len(got), tc.total)
		}
		h := got[:512]
		field := func(off, n int) string { return string(h[off : off+n]) }
		checks := map[string][2]string{
			"name":     {field(0, 100), name + strings.Repeat("\x00", 100-len(name))},
			"mode":     {field(100, 8), "0000600\x00"},
			"uid":      {field(108, 8), "0000000\x00"},
			"gid":      {field(116, 8), "0000000\x00"},
			"mtime":    {field(136, 12), "00000000000\x00"},
			"typeflag": {field(156, 1), "0"},
			"magic":    {field(257, 6), "ustar\x00"},
			"version":  {field(263, 2), "00"},
			"uname":    {field(265, 32), strings.Repeat("\x00", 32)},
			"gname":    {field(297, 32), strings.Repeat("\x00", 32)},
		}
		for k, v := range checks {
			if v[0] != v[1] {
				t.Errorf("%s: %q want %q", k, v[0], v[1])
			}
		}
		if !bytes.Equal(got[512:512+len(body)], body) {
			t.Fatal("body")
		}
		if !bytes.Equal(got[len(got)-1024:], make([]byte, 1024)) {
			t.Fatal("trailer")
		}
	}
}

// With the wall clock as mtime the bytes equal what rc.8's archive/tar call
// produces (header with Name, Mode, Size, ModTime only), rounding included.
func TestWriteTARMatchesRC8(t *testing.T) {
	mt := time.Date(2026, 7, 29, 10, 0, 0, 600_000_000, time.UTC)
	for _, name := range []string{
		"projects/-Users-x-demo/abc.jsonl",
		"projects/é/ü.jsonl", // non-ASCII: PAX
		"sessions/" + strings.Repeat("d", 120) + "/" + strings.Repeat("f", 120) + ".jsonl", // prefix+name
		"sessions/" + strings.Repeat("d", 200) + "/x.jsonl",                                // too long for USTAR: PAX
	} {
		body := jsonl(700)
		var ref bytes.Buffer
		tw := tar.NewWriter(&ref)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), ModTime: mt}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
		tw.Close()
		var got bytes.Buffer
		if err := WriteTAR(&got, name, bytes.NewReader(body), int64(len(body)), mt); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), ref.Bytes()) {
			t.Fatalf("%s: differs from archive/tar defaults", name)
		}
		e, err := ReadTAR(bytes.NewReader(got.Bytes()), name)
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(e)
		if err != nil || !bytes.Equal(back, body) {
			t.Fatalf("%s: read back: %v", name, err)
		}
		if !e.ModTime.Equal(mt.Round(time.Second)) {
			t.Fatalf("mtime %v", e.ModTime)
		}
	}
}

// Weakness #2: the same content gives the same artifact.
func TestWriteTARStable(t *testing.T) {
	a := mustTAR(t, "projects/k/a.jsonl", []byte("x\n"))
	var b bytes.Buffer
	if err := WriteTAR(&b, "projects/k/a.jsonl", strings.NewReader("x\n"), 2, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b.Bytes()) || sha256hex(a) != sha256hex(b.Bytes()) {
		t.Fatal("zero ModTime is not StableModTime")
	}
}

func TestWriteTARErrors(t *testing.T) {
	var sink bytes.Buffer
	wantErr(t, WriteTAR(&sink, "../x.jsonl", strings.NewReader(""), 0, time.Time{}), ErrPathTraversal)
	wantErr(t, WriteTAR(&sink, "/x.jsonl", strings.NewReader(""), 0, time.Time{}), ErrPathAbsolute)
	wantErr(t, WriteTAR(&sink, "a.jsonl", strings.NewReader("ab"), 3, time.Time{}), ErrTARSizeMismatch)
	wantErr(t, WriteTAR(&sink, "a.jsonl", strings.NewReader("abcd"), 3, time.Time{}), ErrTARSizeMismatch)
	wantErr(t, WriteTAR(&sink, "a.jsonl", strings.NewReader(""), MaxPayloadSize+1, time.Time{}), ErrTAREntryTooLarge)
	wantErr(t, WriteTAR(&sink, "a.jsonl", strings.NewReader(""), -1, time.Time{}), ErrTAREntryTooLarge)
	boom := errors.New("boom")
	wantErr(t, WriteTAR(&sink, "a.jsonl", &failingReader{[]byte("ab"), boom}, 3, time.Time{}), boom)
}

// rawTAR builds archives with archive/tar for hostile cases.
func rawTAR(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg || h.Typeflag == 0 {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func reg(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: size, ModTime: StableModTime}
}

func readAllTAR(data []byte, want string) ([]byte, error) {
	e, err := ReadTAR(bytes.NewReader(data), want)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(e)
}

// §5.2 plus the extra rules: every refusal has its own sentinel.
func TestReadTARRejects(t *testing.T) {
	const name = "projects/k/abc.jsonl"
	good := rawTAR(t, reg(name, 10))
	withType := func(flag byte, link string) []byte {
		return rawTAR(t, &tar.Header{Typeflag: flag, Name: name, Linkname: link, Mode: 0o600, ModTime: StableModTime})
	}
	hugeHeader := func() []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		if err := tw.WriteHeader(reg(name, MaxPayloadSize+1)); err != nil {
			t.Fatal(err)
		}
		return append(b.Bytes(), make([]byte, 4096)...)
	}()
	gnuSparse := rawTAR(t, &tar.Header{Typeflag: tar.TypeDir, Format: tar.FormatGNU, Name: name, ModTime: StableModTime})
	gnuSparse[156] = 'S' // an old GNU sparse file with an empty map
	fixChecksum(gnuSparse[:512])
	// archive/tar will not write GNU.sparse records: swap an equally long
	// comment record for one.
	paxSparse := rawTAR(t, &tar.Header{Typeflag: tar.TypeReg, Format: tar.FormatPAX, Name: name, ModTime: StableModTime,
		PAXRecords: map[string]string{"comment": "abcdefghij"}})
	paxSparse = bytes.Replace(paxSparse, []byte("22 comment=abcdefghij\n"), []byte("22 GNU.sparse.major=1\n"), 1)

	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty input", nil, ErrTAREmpty},
		{"only a trailer", make([]byte, 1024), ErrTAREmpty},
		{"garbage", bytes.Repeat([]byte("garbage!"), 64), ErrTARMalformed},
		{"cut header", good[:300], ErrTARMalformed},
		{"symlink", withType(tar.TypeSymlink, "/etc/passwd"), ErrTARSymlink},
		{"hardlink", withType(tar.TypeLink, "projects/k/other.jsonl"), ErrTARHardlink},
		{"char device", withType(tar.TypeChar, ""), ErrTARDevice},
		{"block device", withType(tar.TypeBlock, ""), ErrTARDevice},
		{"fifo", withType(tar.TypeFifo, ""), ErrTARDevice},
		{"directory", withType(tar.TypeDir, ""), ErrTARNotRegular},
		{"gnu sparse", gnuSparse, ErrTARNotRegular},
		{"pax sparse", paxSparse, ErrTARNotRegular},
		{"global header", rawTAR(t, &tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "g", PAXRecords: map[string]string{"comment": "x"}}), ErrTARNotRegular},
		{"dot-dot", rawTAR(t, reg("../abc.jsonl", 1)), ErrPathTraversal},
		{"inner dot-dot", rawTAR(t, reg("projects/../../abc.jsonl", 1)), ErrPathTraversal},
		{"absolute", rawTAR(t, reg("/etc/cron.d/x", 1)), ErrPathAbsolute},
		{"drive absolute", rawTAR(t, reg("C:/x.jsonl", 1)), ErrPathAbsolute},
		{"backslash", rawTAR(t, reg(`projects\k\abc.jsonl`, 1)), ErrPathBackslash},
		{"long name (PAX)", rawTAR(t, reg("projects/"+strings.Repeat("a/", 600)+"x.jsonl", 1)), ErrPathTooLong},
		{"long name (GNU)", rawTAR(t, &tar.Header{Typeflag: tar.TypeReg, Format: tar.FormatGNU, Name: "projects/" + strings.Repeat("b/", 600) + "x.jsonl", Size: 1, ModTime: StableModTime}), ErrPathTooLong},
		{"control char", rawTAR(t, reg("projects/k/a\x01.jsonl", 1)), ErrPathInvalid},
		{"name mismatch", rawTAR(t, reg("projects/k/other.jsonl", 1)), ErrTARNameMismatch},
		{"entry over 32 GiB", hugeHeader, ErrTAREntryTooLarge},
		{"body cut", good[:512+5], ErrTARSizeMismatch},
		{"second entry", rawTAR(t, reg(name, 10), reg("projects/k/second.jsonl", 3)), ErrTARSecondEntry},
		{"second entry same name", rawTAR(t, reg(name, 10), reg(name, 3)), ErrTARSecondEntry},
		{"second entry symlink", rawTAR(t, reg(name, 10), &tar.Header{Typeflag: tar.TypeSymlink, Name: "x", Linkname: "/"}), ErrTARSecondEntry},
		{"no trailer", good[:1024], ErrTARNoTrailer},
		{"one trailer block", good[:1536], ErrTARNoTrailer},
		{"half a trailer block", good[:1024+100], ErrTARNoTrailer},
		{"zero block then garbage", append(good[:1536:1536], bytes.Repeat([]byte{1}, 512)...), ErrTARMalformed},
		{"trailing data", append(good[:len(good):len(good)], 'x'), ErrTARTrailingData},
		{"trailing data after zeros", append(append(good[:len(good):len(good)], make([]byte, 8192)...), 1), ErrTARTrailingData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := readAllTAR(tc.data, name)
			wantErr(t, err, tc.want)
			// The sentinels are distinct from each other.
			for _, other := range []error{ErrTAREmpty, ErrTARMalformed, ErrTARSymlink, ErrTARHardlink, ErrTARDevice,
				ErrTARNotRegular, ErrPathTraversal, ErrPathAbsolute, ErrPathBackslash, ErrPathTooLong, ErrPathInvalid,
				ErrTARNameMismatch, ErrTAREntryTooLarge, ErrTARSizeMismatch, ErrTARSecondEntry, ErrTARNoTrailer, ErrTARTrailingData} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("also matches %v", other)
				}
			}
			_ = out
		})
	}
}

func TestReadTARAccepts(t *testing.T) {
	const name = "projects/k/abc.jsonl"
	body := jsonl(1000)
	good := mustTAR(t, name, body)
	// GNU tar pads to a 10 KiB record with zeros.
	padded := append(good[:len(good):len(good)], make([]byte, 10240-len(good))...)
	// Old-style regular file typeflag NUL.
	regA := append([]byte(nil), good...)
	regA[156] = 0
	fixChecksum(regA[:512])
	gnu := rawTAR(t, &tar.Header{Typeflag: tar.TypeReg, Format: tar.FormatGNU, Name: name, Size: 10, ModTime: StableModTime})
	pax := rawTAR(t, &tar.Header{Typeflag: tar.TypeReg, Format: tar.FormatPAX, Name: name, Size: 10, ModTime: StableModTime, PAXRecords: map[string]string{"comment": "hi"}})
	empty := mustTAR(t, name, nil)
	for label, tc := range map[string]struct {
		data []byte
		want int
	}{
		"plain": {good, len(body)}, "record padding": {padded, len(body)}, "typeflag NUL": {regA, len(body)},
		"GNU": {gnu, 10}, "PAX": {pax, 10}, "empty body": {empty, 0},
	} {
		out, err := readAllTAR(tc.data, name)
		if err != nil || len(out) != tc.want {
			t.Errorf("%s: %d bytes, %v", label, len(out), err)
		}
	}
	// wantName "" skips only the equality check.
	if _, err := readAllTAR(good, ""); err != nil {
		t.Fatal(err)
	}
}

func TestReadTARPassesReaderErrors(t *testing.T) {
	const name = "projects/k/abc.jsonl"
	good := mustTAR(t, name, jsonl(2000))
	boom := errors.New("boom")
	for _, cut := range []int{100, 600, 2600, len(good) - 10, len(good)} {
		_, err := readAllTAR2(&failingReader{good[:cut], boom}, name)
		if !errors.Is(err, boom) {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

func readAllTAR2(r io.Reader, want string) ([]byte, error) {
	e, err := ReadTAR(r, want)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(e)
}

// fixChecksum recomputes a USTAR header checksum after a test edits it.
func fixChecksum(h []byte) {
	copy(h[148:156], "        ")
	var sum int64
	for _, b := range h {
		sum += int64(b)
	}
	s := []byte("0000000\x00")
	for i := 6; i >= 0; i-- {
		s[i] = byte('0' + sum%8)
		sum /= 8
	}
	copy(h[148:156], s)
}

// TestReadTARBombsBounded: archives built to exhaust the reader are refused
// after reading a bounded prefix, in bounded memory: a header claiming more
// than MaxPayloadSize followed by an endless body, and a PAX extended header
// claiming 1 GiB of records followed by endless bytes.
func TestReadTARBombsBounded(t *testing.T) {
	const name = "projects/k/abc.jsonl"
	var huge bytes.Buffer
	tw := tar.NewWriter(&huge)
	if err := tw.WriteHeader(reg(name, 1<<40)); err != nil {
		t.Fatal(err)
	}
	// A PAX header ('x') whose size field claims 1 GiB.
	pax := rawTAR(t, &tar.Header{Typeflag: tar.TypeReg, Format: tar.FormatPAX, Name: name, ModTime: StableModTime,
		PAXRecords: map[string]string{"comment": "x"}})[:512]
	pax = append([]byte{}, pax...)
	if pax[156] != tar.TypeXHeader {
		t.Fatalf("setup: first block is not a PAX header (%q)", pax[156])
	}
	copy(pax[124:136], fmt.Sprintf("%011o\x00", 1<<30))
	fixChecksum(pax)

	for _, tc := range []struct {
		name   string
		prefix []byte
		fill   byte
		want   error
	}{
		{"1 TiB entry, endless body", huge.Bytes(), 'a', ErrTAREntryTooLarge},
		{"1 GiB PAX header, endless records", pax, '9', ErrTARMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &countingSource{b: tc.fill}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			e, err := ReadTAR(io.MultiReader(bytes.NewReader(tc.prefix), src), name)
			if err == nil {
				_, err = io.Copy(io.Discard, e)
			}
			runtime.ReadMemStats(&after)
			wantErr(t, err, tc.want)
			if src.n > 4<<20 {
				t.Errorf("read %d bytes of the endless part before refusing", src.n)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("allocated %d bytes", alloc)
			}
		})
	}
}

// TestTARHeaderTrailerMatchWriteTAR: TARHeader, the body and TARTrailer are
// byte for byte what WriteTAR writes, for short, long (PAX) and non-ASCII
// names and for sizes around block boundaries; the header's length does
// not depend on the size below 8 GiB, so a writer can reserve it.
func TestTARHeaderTrailerMatchWriteTAR(t *testing.T) {
	names := []string{"projects/p/s.jsonl", "sessions/2026/01/02/" + strings.Repeat("n", 120) + ".jsonl", "projects/é/s.jsonl"}
	for _, name := range names {
		h0, err := TARHeader(name, 0, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int64{0, 1, 511, 512, 513, 1024, 4097} {
			body := bytes.Repeat([]byte{'x'}, int(size))
			var want bytes.Buffer
			if err := WriteTAR(&want, name, bytes.NewReader(body), size, time.Time{}); err != nil {
				t.Fatal(err)
			}
			h, err := TARHeader(name, size, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			got := append(append(h, body...), TARTrailer(size)...)
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("%s, %d bytes: header+body+trailer differs from WriteTAR", name, size)
			}
		}
		for _, size := range []int64{1 << 30, 8<<30 - 1} {
			if h, err := TARHeader(name, size, time.Time{}); err != nil || len(h) != len(h0) {
				t.Fatalf("%s, %d bytes: header length %d, at size 0 %d (%v)", name, size, len(h), len(h0), err)
			}
		}
	}
	if _, err := TARHeader("../x", 0, time.Time{}); !errors.Is(err, ErrPathTraversal) {
		t.Fatal(err)
	}
	if _, err := TARHeader("x", MaxPayloadSize+1, time.Time{}); !errors.Is(err, ErrTAREntryTooLarge) {
		t.Fatal(err)
	}
}
