//go:build !goexperiment.jsonv2

package nous

// encodingJSONv2 reports whether encoding/json is the version 2
// implementation (GOEXPERIMENT=jsonv2), which writes invalid UTF-8 as a
// literal U+FFFD where version 1, and jsonWriter, write \ufffd.
const encodingJSONv2 = false
