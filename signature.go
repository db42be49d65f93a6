package nous

// OptionProvider is the [ContentPart.Options] key naming the provider
// adapter whose API made a part ("anthropic", "openai", "gemini"): its
// thinking, or an image its model made. An adapter sends signed thinking
// back only to the API that made it, and drops the other providers' (their
// signatures mean nothing to it).
const OptionProvider = "provider"

// The [ContentPart.Options] keys that make a [PartThinking] part signed:
// what a model's provider handed out with the thinking and wants back,
// byte for byte, with the tool calls that follow it. A provider that gets
// the calls without their signed thinking refuses the request.
//
// The provider adapters write them, each the ones its API gives, when they
// read a reply, with OptionProvider naming the adapter, and send a part back
// only to the API that made it; compaction reads them, so that no cut
// separates signed thinking from its calls. A part is signed when one of
// them holds a non-empty string. The values are stored in logs and never
// change.
const (
	OptionSignature        = "signature"         // a signature over the thinking's text
	OptionRedactedData     = "redacted_data"     // thinking the provider hid: opaque data in place of text
	OptionThoughtSignature = "thought_signature" // an opaque signature of the model's thought
	OptionEncryptedContent = "encrypted_content" // the thinking, encrypted for a request that has no server state
)

// signatureKeys are the option keys of signed thinking, in one list.
var signatureKeys = [...]string{OptionSignature, OptionRedactedData, OptionThoughtSignature, OptionEncryptedContent}

// signed reports whether opts holds a signature under one of signatureKeys.
func signed(opts map[string]any) bool {
	for _, k := range signatureKeys {
		if s, _ := opts[k].(string); s != "" {
			return true
		}
	}
	return false
}
