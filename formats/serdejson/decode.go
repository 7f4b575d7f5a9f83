package serdejson

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrType is matched (errors.Is) by every error of the typed accessors and
// DecodeStruct: the JSON is well formed but does not fit the Rust type. The
// error text is serde's ("missing field `x`", "invalid type: null, expected
// a sequence"), without a position.
var ErrType = errors.New("JSON value does not fit the type")

func typeErr(format string, args ...any) error {
	return &jsonError{kind: ErrType, msg: fmt.Sprintf(format, args...)}
}

// unexpected describes v the way serde's "invalid type" errors do.
func (v Value) unexpected() string {
	switch v.kind {
	case KindNull:
		return "null"
	case KindBool:
		return fmt.Sprintf("boolean `%s`", v.raw)
	case KindNumber:
		if v.IsFloat() || string(v.raw) == "-0" {
			return fmt.Sprintf("floating point `%s`", v.raw)
		}
		return fmt.Sprintf("integer `%s`", v.raw)
	case KindString:
		return fmt.Sprintf("string %q", decodeString(v.raw))
	}
	return v.kind.String()
}

func (v Value) invalidType(expected string) error {
	return typeErr("invalid type: %s, expected %s", v.unexpected(), expected)
}

// IsNull reports whether v is null (an Option that is None).
func (v Value) IsNull() bool { return v.kind == KindNull }

// Text returns the string of a String value (Rust String).
func (v Value) Text() (string, error) {
	if v.kind != KindString {
		return "", v.invalidType("a string")
	}
	return decodeString(v.raw), nil
}

// Boolean returns the value of a Bool (Rust bool).
func (v Value) Boolean() (bool, error) {
	if v.kind != KindBool {
		return false, v.invalidType("a boolean")
	}
	return v.raw[0] == 't', nil
}

// Uint returns the value of an unsigned integer field of the given bit size
// (8, 16, 32 or 64; usize is 64). As in serde_json, the number must be spelled
// as an integer: 1.0 and 1e2 are floats, and so is -0 and any integer beyond
// the 64-bit range. Negative and too large integers are refused.
func (v Value) Uint(bits int) (uint64, error) {
	expected := "u" + strconv.Itoa(bits)
	if bits == 64 {
		expected = "u64"
	}
	lit := string(v.raw)
	if v.kind != KindNumber || v.IsFloat() || lit == "-0" {
		return 0, v.invalidType(expected)
	}
	if lit[0] == '-' {
		if _, err := strconv.ParseInt(lit, 10, 64); err != nil {
			return 0, typeErr("invalid type: floating point `%s`, expected %s", lit, expected)
		}
		return 0, typeErr("invalid value: integer `%s`, expected %s", lit, expected)
	}
	u, err := strconv.ParseUint(lit, 10, 64)
	if err != nil {
		return 0, typeErr("invalid type: floating point `%s`, expected %s", lit, expected)
	}
	if bits < 64 && u>>uint(bits) != 0 {
		return 0, typeErr("invalid value: integer `%s`, expected %s", lit, expected)
	}
	return u, nil
}

// Uint64 is Uint(64).
func (v Value) Uint64() (uint64, error) { return v.Uint(64) }

// Int64 returns the value of an i64 field: an integer spelling within range.
func (v Value) Int64() (int64, error) {
	lit := string(v.raw)
	if v.kind != KindNumber || v.IsFloat() || lit == "-0" {
		return 0, v.invalidType("i64")
	}
	i, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		if lit[0] != '-' {
			if _, err := strconv.ParseUint(lit, 10, 64); err == nil {
				return 0, typeErr("invalid value: integer `%s`, expected i64", lit)
			}
		}
		return 0, typeErr("invalid type: floating point `%s`, expected i64", lit)
	}
	return i, nil
}

// Float64 returns the value of an f64 field. Integers are accepted (and are
// written back as floats, "0" becoming "0.0"); "-0" is -0.0. A number whose
// magnitude is too large for an f64 is refused ("number out of range");
// null, which serde_json writes for NaN and ±Inf, is refused as in serde.
func (v Value) Float64() (float64, error) {
	if v.kind != KindNumber {
		return 0, v.invalidType("f64")
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, typeErr("number out of range: %s", v.raw)
	}
	return f, nil
}

// Float32 returns the value of an f32 field the way serde does: the number
// is parsed as an f64 and then rounded to f32 (which may overflow to ±Inf).
func (v Value) Float32() (float32, error) {
	f, err := v.Float64()
	if err != nil {
		if v.kind != KindNumber {
			return 0, v.invalidType("f32")
		}
		return 0, err
	}
	return float32(f), nil
}

// Field describes one field of a serde_derive struct for DecodeStruct.
type Field struct {
	// Name is the JSON key, matched exactly (case-sensitive).
	Name string
	// Optional says a missing key is fine: an Option<T> field or one with
	// #[serde(default)]. Decode is then not called.
	Optional bool
	// Decode stores the value; its error is returned as is.
	Decode func(Value) error
}

// DecodeStruct decodes v into a struct named typeName whose fields, in
// declaration order, are fields, as serde_derive's generated code does:
//
//   - an object: each known key is decoded once (a second occurrence is an
//     error "duplicate field `x`"), unknown keys are ignored, and a missing
//     key that is not Optional is an error "missing field `x`";
//   - an array: the elements are the fields in declaration order, and there
//     must be exactly len(fields) of them;
//   - anything else is an error.
func DecodeStruct(v Value, typeName string, fields []Field) error {
	switch v.kind {
	case KindArray:
		n := 0
		err := v.Elems(func(e Value) error {
			if n >= len(fields) {
				return typeErr("trailing characters: struct %s has %d elements", typeName, len(fields))
			}
			n++
			return fields[n-1].Decode(e)
		})
		if err != nil {
			return err
		}
		if n < len(fields) {
			return typeErr("invalid length %d, expected struct %s with %d elements", n, typeName, len(fields))
		}
		return nil
	case KindObject:
	default:
		return v.invalidType("struct " + typeName)
	}
	var seenBuf [16]bool
	seen := seenBuf[:0]
	if len(fields) <= len(seenBuf) {
		seen = seenBuf[:len(fields)]
	} else {
		seen = make([]bool, len(fields))
	}
	err := v.Members(func(key string, val Value) error {
		i := fieldIndex(fields, key)
		if i < 0 {
			return nil // unknown field: ignored
		}
		if seen[i] {
			return typeErr("duplicate field `%s`", key)
		}
		seen[i] = true
		return fields[i].Decode(val)
	})
	if err != nil {
		return err
	}
	for i, f := range fields {
		if !seen[i] && !f.Optional {
			return typeErr("missing field `%s`", f.Name)
		}
	}
	return nil
}

func fieldIndex(fields []Field, key string) int {
	for i := range fields {
		if fields[i].Name == key {
			return i
		}
	}
	return -1
}
