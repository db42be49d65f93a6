package nous

import (
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"
)

// The bounds of a log's name and labels ([WithLogName], [WithLogLabels]).
const (
	MaxNameBytes = 1024 // a name, a label's key or its value
	MaxLabels    = 64   // labels of one log
)

// CheckName reports whether a store can keep name and labels as a log's:
// nil, or an error wrapping [ErrInvalidName] that says what is wrong. The
// empty name is no name. Save checks it before it writes; a [Store]
// checks it in Append, as the rule every backend keeps.
func CheckName(name string, labels map[string]string) error {
	if !validName(name) {
		return fmt.Errorf("the name %.40q is not valid UTF-8 of at most %d bytes without NUL: %w", name, MaxNameBytes, ErrInvalidName)
	}
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels, over %d: %w", len(labels), MaxLabels, ErrInvalidName)
	}
	for k, v := range labels {
		if k == "" || !validName(k) || !validName(v) {
			return fmt.Errorf("the label %.40q=%.40q: a key of 1 to %d bytes and a value of at most %d, valid UTF-8 without NUL: %w",
				k, v, MaxNameBytes, MaxNameBytes, ErrInvalidName)
		}
	}
	return nil
}

// MaxKeyBytes bounds a batch key ([Context.SetBatchKey]).
const MaxKeyBytes = 256

// CheckKey reports whether a store can keep key as a batch's: nil, or an
// error wrapping [ErrInvalidKey]. A key is valid UTF-8 of at most
// [MaxKeyBytes] bytes without NUL; "" is no key. Save checks it before it
// writes; a [Store] checks it in Append.
func CheckKey(key string) error {
	if len(key) > MaxKeyBytes || !utf8.ValidString(key) || strings.ContainsRune(key, 0) {
		return fmt.Errorf("the batch key %.40q is not valid UTF-8 of at most %d bytes without NUL: %w", key, MaxKeyBytes, ErrInvalidKey)
	}
	return nil
}

// validName reports whether s is valid UTF-8 of at most MaxNameBytes
// bytes without NUL (which a PostgreSQL text cannot hold).
func validName(s string) bool {
	return len(s) <= MaxNameBytes && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// cloneLabels returns a copy of labels, nil for none.
func cloneLabels(labels map[string]string) map[string]string {
	if len(labels) == 0 {
		return nil
	}
	return maps.Clone(labels)
}
