package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// shape describes the JSON a strict parser accepts. A nil *shape is a
// scalar; fields describes an object with exactly those keys; elem with
// isArray an array, with isMap an object with arbitrary keys.
type shape struct {
	fields  map[string]*shape
	elem    *shape
	isArray bool
	isMap   bool
}

var envelopeShape = &shape{fields: map[string]*shape{
	"schema_version": nil, "kind": nil, "snapshot_id": nil, "parent_revision": nil,
	"agent": nil, "adapter_schema": nil, "source_agent_version": nil,
	"source_platform": nil, "project_id": nil, "session_id": nil, "created_at": nil,
	"files": {isArray: true, elem: &shape{fields: map[string]*shape{
		"path": nil, "mode": nil, "size": nil, "sha256": nil,
	}}},
}}

var manifestShape = &shape{fields: map[string]*shape{
	"schema_version": nil, "revision": nil, "updated_at": nil,
	"sessions": {isMap: true, elem: &shape{fields: map[string]*shape{
		"agent": nil, "session_id": nil, "snapshot_id": nil, "project_id": nil, "updated_at": nil,
	}}},
}}

// docKind is what parsing the envelope line and the manifest share: the
// size limit, the error of a larger document, the error wrapping a decode
// or strictness failure, and the strict shape.
type docKind struct {
	limit    int
	tooLarge error
	invalid  error
	shape    *shape
}

var (
	envelopeDoc = docKind{MaxMetadataLine, ErrMetadataTooLarge, ErrInvalidMetadata, envelopeShape}
	manifestDoc = docKind{MaxManifestSize, ErrManifestTooLarge, ErrInvalidManifest, manifestShape}
)

func (k docKind) checkSize(data []byte) error {
	if len(data) > k.limit {
		return fmt.Errorf("%w: %d bytes", k.tooLarge, len(data))
	}
	return nil
}

// decode is rc.8's lenient json.Unmarshal of data into dst, after the size
// check.
func (k docKind) decode(data []byte, dst any) error {
	if err := k.checkSize(data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("%w: %v", k.invalid, err)
	}
	return nil
}

// checkStrict is the size check and then checkStrict of the kind's shape.
func (k docKind) checkStrict(data []byte) error {
	if err := k.checkSize(data); err != nil {
		return err
	}
	if err := checkStrict(data, k.shape); err != nil {
		return fmt.Errorf("%w: %w", k.invalid, err)
	}
	return nil
}

// checkStrict rejects invalid UTF-8, duplicate keys anywhere, keys the shape
// does not list (including keys differing only in case), missing keys, null,
// and a value of the wrong JSON kind. Scalar types are left to
// json.Unmarshal.
func checkStrict(data []byte, sh *shape) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: invalid UTF-8", ErrStrictJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkStrict(dec, sh, "$"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data", ErrStrictJSON)
	}
	return nil
}

func walkStrict(dec *json.Decoder, sh *shape, where string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStrictJSON, err)
	}
	switch t := tok.(type) {
	case nil:
		return fmt.Errorf("%w: null at %s", ErrStrictJSON, where)
	case json.Delim:
		switch {
		case t == '{' && sh != nil && (sh.fields != nil || sh.isMap):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%w: %v", ErrStrictJSON, err)
				}
				key, _ := kt.(string)
				if seen[key] {
					return fmt.Errorf("%w: duplicate key %q at %s", ErrStrictJSON, key, where)
				}
				seen[key] = true
				sub := sh.elem
				if !sh.isMap {
					var ok bool
					if sub, ok = sh.fields[key]; !ok {
						return fmt.Errorf("%w: unknown key %q at %s", ErrStrictJSON, key, where)
					}
				}
				if err := walkStrict(dec, sub, where+"."+key); err != nil {
					return err
				}
			}
			if !sh.isMap {
				for k := range sh.fields {
					if !seen[k] {
						return fmt.Errorf("%w: missing key %q at %s", ErrStrictJSON, k, where)
					}
				}
			}
		case t == '[' && sh != nil && sh.isArray:
			for i := 0; dec.More(); i++ {
				if err := walkStrict(dec, sh.elem, fmt.Sprintf("%s[%d]", where, i)); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("%w: unexpected %v at %s", ErrStrictJSON, t, where)
		}
		if _, err := dec.Token(); err != nil { // closing delimiter
			return fmt.Errorf("%w: %v", ErrStrictJSON, err)
		}
		return nil
	default:
		if sh != nil {
			return fmt.Errorf("%w: scalar at %s", ErrStrictJSON, where)
		}
		return nil
	}
}
