package nous

import "reflect"

// sameValue reports whether a and b are surely the same value: of one type,
// and equal by ==. Values that cannot be compared (a map, also one held in
// an interface field of a struct) are never surely the same. It tells a
// store handle from another.
func sameValue(a, b any) bool {
	// reflect.Value.Comparable looks at the value, not only its type: a
	// struct of a comparable type may hold a map in an interface field.
	return a != nil && b != nil && reflect.ValueOf(a).Comparable() && reflect.ValueOf(b).Comparable() &&
		reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
}
