//go:build goexperiment.jsonv2

package nous

// encodingJSONv2: see jsonv2_off_internal_test.go.
const encodingJSONv2 = true
