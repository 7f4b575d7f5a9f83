package serdejson

// Field decoders for DecodeStruct: each returns the Decode function of a
// Field that stores the member's value in dst (an Option field stores a
// pointer, set only when the member is present and not null).

// Required is a field that must be present; its value, null included, is
// decoded by dec (and so null is refused unless dec accepts it).
func Required(name string, dec func(Value) error) Field {
	return Field{Name: name, Decode: dec}
}

// Defaulted is a #[serde(default)] field: a missing key keeps the default;
// a present one, null included, is decoded by dec.
func Defaulted(name string, dec func(Value) error) Field {
	return Field{Name: name, Optional: true, Decode: dec}
}

// Option is an Option<T> field: a missing key or null leaves it None; any
// other value is decoded by dec, which stores Some.
func Option(name string, dec func(Value) error) Field {
	return Field{Name: name, Optional: true, Decode: func(v Value) error {
		if v.IsNull() {
			return nil
		}
		return dec(v)
	}}
}

// ListField decodes a Vec<T> into dst, each element by dec (never nil once
// decoded; on an error dst holds the elements up to the failing one).
func ListField[T any](dst *[]T, dec func(*T, Value) error) func(Value) error {
	return func(v Value) error {
		out := make([]T, 0, v.Len())
		err := v.Elems(func(e Value) error {
			var x T
			err := dec(&x, e)
			out = append(out, x)
			return err
		})
		*dst = out
		return err
	}
}

// field decodes a value with get into dst.
func field[T any](dst *T, get func(Value) (T, error)) func(Value) error {
	return func(v Value) (err error) { *dst, err = get(v); return }
}

// optField decodes an Option<T> with get into dst, which is set only when
// get succeeds.
func optField[T any](dst **T, get func(Value) (T, error)) func(Value) error {
	return func(v Value) error {
		x, err := get(v)
		if err == nil {
			*dst = &x
		}
		return err
	}
}

// uint32Of is Value.Uint(32) as a u32.
func uint32Of(v Value) (uint32, error) {
	u, err := v.Uint(32)
	return uint32(u), err
}

// StringField decodes a string into dst.
func StringField(dst *string) func(Value) error { return field(dst, Value.Text) }

// OptStringField decodes an Option<String> into dst.
func OptStringField(dst **string) func(Value) error { return optField(dst, Value.Text) }

// Uint32Field decodes a u32 into dst.
func Uint32Field(dst *uint32) func(Value) error { return field(dst, uint32Of) }

// OptUint32Field decodes an Option<u32> into dst.
func OptUint32Field(dst **uint32) func(Value) error { return optField(dst, uint32Of) }

// Uint64Field decodes a u64 into dst.
func Uint64Field(dst *uint64) func(Value) error { return field(dst, Value.Uint64) }

// OptUint64Field decodes an Option<u64> into dst.
func OptUint64Field(dst **uint64) func(Value) error { return optField(dst, Value.Uint64) }

// Float32Field decodes an f32 into dst.
func Float32Field(dst *float32) func(Value) error { return field(dst, Value.Float32) }

// OptFloat32Field decodes an Option<f32> into dst.
func OptFloat32Field(dst **float32) func(Value) error { return optField(dst, Value.Float32) }

// Float64Field decodes an f64 into dst.
func Float64Field(dst *float64) func(Value) error { return field(dst, Value.Float64) }

// OptFloat64Field decodes an Option<f64> into dst.
func OptFloat64Field(dst **float64) func(Value) error { return optField(dst, Value.Float64) }

// BoolField decodes a bool into dst.
func BoolField(dst *bool) func(Value) error { return field(dst, Value.Boolean) }

// StringsField decodes a Vec<String> into dst (never nil once decoded).
func StringsField(dst *[]string) func(Value) error {
	return func(v Value) error {
		out := make([]string, 0, v.Len())
		err := v.Elems(func(e Value) error {
			s, err := e.Text()
			out = append(out, s)
			return err
		})
		*dst = out
		return err
	}
}
