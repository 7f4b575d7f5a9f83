package session

import (
	"crypto/sha256"
	"hash"
	"io"
	"runtime"
	"testing"
)

// genReader yields n bytes of synthetic JSONL, deterministically.
type genReader struct {
	n, off int64
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	const line = `{"type":"assistant","cwd":"/home/alice/code/demo","text":"lorem ipsum dolor sit amet"}` + "\n"
	if rem := g.n - g.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	for i := range p {
		p[i] = line[(g.off+int64(i))%int64(len(line))]
	}
	g.off += int64(len(p))
	return len(p), nil
}

// memProbe hashes what it is given and samples the heap every 4 MiB.
type memProbe struct {
	h       hash.Hash
	n       int64
	next    int64
	maxHeap uint64
}

func (m *memProbe) Write(p []byte) (int, error) {
	m.h.Write(p)
	m.n += int64(len(p))
	if m.n >= m.next {
		m.next += 4 << 20
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > m.maxHeap {
			m.maxHeap = ms.HeapInuse
		}
	}
	return len(p), nil
}

// A 64 MiB payload streams through TAR, framing, age and back without the
// heap growing with it.
func TestStreamingRoundTrip64MiB(t *testing.T) {
	const bodySize = 64 << 20
	const name = "sessions/2026/07/28/rollout-big.jsonl"

	// Pass 1: hash the TAR (as a push does, before building the envelope).
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(WriteTAR(pw, name, &genReader{n: bodySize}, bodySize, StableModTime)) }()
	size, sum, err := HashPayload(pr)
	if err != nil {
		t.Fatal(err)
	}
	if size != 512+bodySize+1024 {
		t.Fatalf("tar size %d", size)
	}
	env := testEnvelope(name, nil)
	env.Agent = AgentCodex
	env.Files[0] = NewFileDescriptor(name, size, sum)

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	// Pass 2: TAR → WriteSnapshot → Encrypt → pipe → Decrypt → ReadSnapshot → ReadTAR.
	tarR, tarW := io.Pipe()
	go func() { tarW.CloseWithError(WriteTAR(tarW, name, &genReader{n: bodySize}, bodySize, StableModTime)) }()
	ctR, ctW := io.Pipe()
	go func() {
		w, err := Encrypt(ctW, testPass, testWF, AllowWeak())
		if err == nil {
			err = WriteSnapshot(w, env, tarR, size)
		}
		if err == nil {
			err = w.Close()
		}
		tarR.CloseWithError(err)
		ctW.CloseWithError(err)
	}()
	plain, err := Decrypt(ctR, testPass)
	if err != nil {
		t.Fatal(err)
	}
	gotEnv, payload, err := ReadSnapshot(plain)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := ReadTAR(payload, gotEnv.Files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	probe := &memProbe{h: sha256.New()}
	if _, err := io.Copy(probe, entry); err != nil {
		t.Fatal(err)
	}

	want := sha256.New()
	io.Copy(want, &genReader{n: bodySize})
	if probe.n != bodySize || string(probe.h.Sum(nil)) != string(want.Sum(nil)) {
		t.Fatalf("body differs: %d bytes", probe.n)
	}
	growth := int64(probe.maxHeap) - int64(base.HeapInuse)
	t.Logf("heap in use: base %d MiB, max %d MiB, growth %d KiB", base.HeapInuse>>20, probe.maxHeap>>20, growth>>10)
	if growth > 32<<20 {
		t.Fatalf("heap grew by %d MiB for a 64 MiB payload", growth>>20)
	}
}
