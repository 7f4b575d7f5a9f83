// Package serdejson reads and writes JSON byte for byte as Rust's serde_json
// 1.0.151 does for serde_derive structs, so that Go can produce and hash the
// exact bytes lean-ctx produces (Context Snapshot v1, .ctxpkg v1).
//
// Writing (Writer and its ...Member methods, QuoteString, FormatFloat,
// FormatFloat32, Pretty):
//
//   - keys are written in the order the caller writes them, which must be the
//     Rust struct's declaration order; nothing is sorted;
//   - compact output has no whitespace; Pretty gives serde_json's
//     to_string_pretty layout (two-space indent, ": ", empty [] and {} inline,
//     no trailing newline);
//   - strings use serde_json's escapes: \" \\ \b \t \n \f \r, \u00xx with
//     lowercase hex for the other bytes below 0x20, and nothing else (no HTML
//     escaping, U+2028/U+2029 and 0x7F raw); AppendRawString is the same
//     without the U+FFFD replacement below, for text copied from a file;
//   - floats are formatted as zmij 1.0.23 formats them for serde_json:
//     shortest round-trip digits, fixed notation with a ".0" suffix for
//     integral values when the decimal exponent is in [-5, 15] (f64) or
//     [-6, 12] (f32), otherwise scientific with an explicit "+" on positive
//     exponents ("1e+16", "1e-6"); NaN and ±Inf are written as null. The
//     Ryu era (Writer.SetEra), serde_json before 1.0.147, differs only in
//     writing positive exponents without "+" ("1e16"); verification uses it
//     to re-render documents older lean-ctx releases wrote (EraSensitive
//     says whether a value is written differently).
//
// Timestamps (FormatTime, FormatRFC3339) follow chrono 0.4.45: the serde form
// of DateTime<Utc> ends in "Z", to_rfc3339 ends in "+00:00", both with the
// AutoSi fraction (none, 3, 6 or 9 digits).
//
// Reading (Parse, Value, DecodeStruct with the Field kinds Required,
// Defaulted and Option and the ...Field decoders) follows serde_json's
// grammar and the serde_derive defaults. Parse validates the whole input once; a Value is a
// view of its bytes, decoded only when asked, so ignored data costs no
// allocation. The rules: strict RFC 8259 syntax, only whitespace after the
// value, raw control characters and lone surrogate escapes refused, invalid
// UTF-8 refused, unknown struct fields ignored, duplicate known fields and
// missing required fields refused, exact-case key matching, integers
// distinguished from floats by their spelling (so 1.0 is not a u64 and -0 is
// the float -0.0), and at most MaxDepth (127) nested arrays and objects, as
// serde_json's recursion limit of 128 allows.
//
// Deliberate differences from serde_json:
//
//   - Go strings may hold invalid UTF-8, Rust strings cannot: the Writer
//     replaces each invalid byte with U+FFFD. Callers that must not alter
//     data check utf8.ValidString first.
//   - Floats are parsed with strconv.ParseFloat, which is correctly rounded.
//     serde_json without its float_roundtrip feature can land 1 ulp off for
//     some 17-significant-digit inputs; whether lean-ctx enables that feature
//     is unverified.
//   - Error texts follow serde's ("missing field `x`", "trailing comma at
//     line 1 column 9"), but type errors carry no position and the texts are
//     not guaranteed to match serde_json's word for word.
//   - The nesting limit applies to every value, including ignored unknown
//     fields (serde_json's limit for ignored values is unverified).
package serdejson
