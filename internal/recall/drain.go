//go:build !ctx_lean

package recall

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// drainWait bounds how long the end of the input waits for the answers to
// requests read before it.
const drainWait = 60 * time.Second

// answered pairs the input and the output of one connection so that the
// end of the input (a client that writes its requests and closes its end
// of the pipe, e.g. a script) is passed on only once every request read
// was answered: the SDK stops at end of input and would drop the answers
// still being computed.
type answered struct {
	mu        sync.Mutex
	cond      *sync.Cond
	requests  int // requests (a method and an id) read
	responses int // responses (an id, no method) written
	inPart    []byte
	outPart   []byte
}

func newAnswered() *answered {
	a := &answered{}
	a.cond = sync.NewCond(&a.mu)
	return a
}

// rpcLine classifies one JSON-RPC message.
func rpcLine(line []byte) (request, response bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return false, false
	}
	return m.Method != "", m.Method == ""
}

// count feeds data's complete lines to fn, keeping a partial last line.
func count(part *[]byte, data []byte, fn func(line []byte)) {
	*part = append(*part, data...)
	for {
		i := bytes.IndexByte(*part, '\n')
		if i < 0 {
			break
		}
		fn((*part)[:i])
		*part = (*part)[i+1:]
	}
	if len(*part) > 1<<20 { // a line this long is the SDK's to refuse; stop holding it
		*part = nil
	}
}

type answeredReader struct {
	a *answered
	r io.Reader
}

func (ar answeredReader) Read(p []byte) (int, error) {
	n, err := ar.r.Read(p)
	a := ar.a
	a.mu.Lock()
	count(&a.inPart, p[:n], func(line []byte) {
		if req, _ := rpcLine(line); req {
			a.requests++
		}
	})
	if errors.Is(err, io.EOF) {
		deadline := time.AfterFunc(drainWait, func() { a.mu.Lock(); a.responses = a.requests; a.cond.Broadcast(); a.mu.Unlock() })
		for a.responses < a.requests {
			a.cond.Wait()
		}
		deadline.Stop()
	}
	a.mu.Unlock()
	return n, err
}

type answeredWriter struct {
	a *answered
	w io.Writer
}

func (aw answeredWriter) Write(p []byte) (int, error) {
	n, err := aw.w.Write(p)
	a := aw.a
	a.mu.Lock()
	count(&a.outPart, p[:n], func(line []byte) {
		if _, resp := rpcLine(line); resp {
			a.responses++
		}
	})
	a.cond.Broadcast()
	a.mu.Unlock()
	return n, err
}

func (answeredWriter) Close() error { return nil }
