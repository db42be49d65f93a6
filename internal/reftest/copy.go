package reftest

import "reflect"

// Copy returns a deep copy of v: every map, slice and pointer, of any type,
// at any depth, is copied (slices up to their length), and so are the
// exported fields of structs. nil stays nil.
func Copy(v any) any { return copyOf(reflect.ValueOf(v), false) }

// Snapshot is [Copy] with every slice taken up to its capacity, not its
// length, so that comparing two snapshots also catches a write into a
// slice's spare capacity.
func Snapshot(v any) any { return copyOf(reflect.ValueOf(v), true) }

func copyOf(v reflect.Value, full bool) any {
	if !v.IsValid() {
		return nil
	}
	return copyValue(v, full).Interface()
}

func copyValue(v reflect.Value, full bool) reflect.Value {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		return copyValue(v.Elem(), full)
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(copyValue(v.Elem(), full))
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), settable(copyValue(it.Value(), full), v.Type().Elem()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		if full {
			v = v.Slice(0, v.Cap())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(settable(copyValue(v.Index(i), full), v.Type().Elem()))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(settable(copyValue(v.Field(i), full), f.Type()))
			}
		}
		return out
	}
	return v
}

// settable returns v as a value of type t: the zero value for a nil
// interface.
func settable(v reflect.Value, t reflect.Type) reflect.Value {
	if !v.IsValid() || (v.Kind() == reflect.Interface && v.IsNil()) {
		return reflect.Zero(t)
	}
	return v
}

// Spare returns a []any holding items, with extra spare capacity filled
// with sentinels, so that a reducer appending into it in place shows in a
// [Snapshot].
func Spare(extra int, items ...any) []any {
	s := make([]any, len(items), len(items)+extra)
	copy(s, items)
	full := s[:cap(s)]
	for i := len(items); i < len(full); i++ {
		full[i] = "spare"
	}
	return s
}

// Scribble overwrites in place everything reachable from v that a holder of
// v could write: every element of every map and slice, spare capacity
// included, every exported field of a struct it can address, and a
// "scribbled" key added to every map with string keys. Pass a pointer to
// scribble over a struct.
func Scribble(v any) { scribble(reflect.ValueOf(v)) }

func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		switch v.Elem().Kind() {
		case reflect.Map, reflect.Slice, reflect.Pointer:
			scribble(v.Elem())
		default:
			if v.CanSet() && reflect.TypeFor[string]().AssignableTo(v.Type()) {
				v.Set(reflect.ValueOf("scribbled"))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		et := v.Type().Elem()
		for _, k := range v.MapKeys() {
			e := reflect.New(et).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
		if v.Type().Key().Kind() == reflect.String {
			v.SetMapIndex(reflect.ValueOf("scribbled").Convert(v.Type().Key()), reflect.Zero(et))
		}
	case reflect.Slice:
		full := v.Slice(0, v.Cap())
		for i := range full.Len() {
			scribble(full.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString("scribbled")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(-1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.CanSet() {
			v.SetUint('X')
		}
	case reflect.Float32, reflect.Float64:
		if v.CanSet() {
			v.SetFloat(-0.5)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	}
}
