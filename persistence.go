package nous

import (
	"sync"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// persistence is what a context keeps for writing itself out: what it
// knows of the store it was last loaded, saved or refreshed with, what its
// saves keep to write the next one at the cost of what changed, and the
// paths its warnings named. It is one value, so that a context that
// forks (Clone) or is made anew starts it over in one assignment; its
// logic is in save.go, depscache.go and warnings.go.
type persistence struct {
	synced   syncPoint // the store's head and state as the context last saw them
	batchKey string    // the key of the next batch Save stores; "" for a random one
	// depsCache keeps the JSON of the deps' values the last save wrote,
	// to write again those that did not change; nil until a save.
	depsCache *depsCache
	warned    *warnedPaths // the paths of dropped values its warnings named
	masks     *maskCache   // the masker of the deps' secret values last made
}

// newPersistence returns the persistence of a context never saved.
func newPersistence() persistence {
	return persistence{warned: new(warnedPaths), masks: new(maskCache)}
}

// sanitizer returns the sanitizer c is written with: it redacts by c's
// rule and masks the secret values of c's deps, those under the keys the
// rule names, at any depth ([jsonx.CollectSecrets]), wherever they occur.
// Finding them costs a walk of the deps.
func (c *Context) sanitizer() *sanitizer {
	s := newSanitizer(c.Redact)
	s.Mask = c.persist.masker(jsonx.CollectSecrets(nil, c.Deps, s.Rule))
	return s
}

// masker returns the masker of secrets: the one p made last when it masks
// the same, so that a save whose secrets did not change makes none.
func (p *persistence) masker(secrets []string) *jsonx.Masker {
	mc := p.masks
	if mc == nil { // the zero Context
		return jsonx.NewMasker(secrets)
	}
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if !mc.m.Masks(secrets) {
		mc.m = jsonx.NewMasker(secrets)
	}
	return mc.m
}

// maskCache keeps the masker a context last wrote itself with, for the
// next write of the same secrets. It is safe for concurrent use, as
// Serialize of an idle context is.
type maskCache struct {
	mu sync.Mutex
	m  *jsonx.Masker
}

// syncPoint is what a context remembers of the store it was last loaded,
// saved or refreshed with.
type syncPoint struct {
	store       Store     // the handle it last used
	head        int64     // the seq it last saw stored
	incarnation uuid.UUID // the incarnation it last saw stored
	state       []byte    // the state document it last wrote or read
	// attempts are the batches sent since whose outcome is unknown: one
	// of them may have landed.
	attempts []attempt
	// keys are the keys of the batches of the stored log as c last saw
	// it ([EventBatch]), each with the seq of its batch event.
	keys map[string]int64
}

// attempt is a batch a save sent whose outcome it never learnt: the head
// it would give the log, the state it held, and the secrets it masked.
// Its events are c's, up to that head; the last names it.
type attempt struct {
	head  int64
	state []byte
	mask  *jsonx.Masker
}

// maxAttempts bounds the batches a context remembers of the saves that
// failed since its last save: past it, the newest are kept (the last
// before the store came back is the one most likely to have landed).
const maxAttempts = 16

// depsCache keeps, for each top-level key of the deps a save wrote, a copy
// of the value as written and its JSON, so that the next save encodes only
// the keys whose value changed, and of a list that grew only the elements
// appended: a save's cost follows what changed in the state, not the
// state's size. It holds values of the JSON types only (maps of string
// keys, lists, strings, numbers, booleans, nil), which it compares with
// the deps' values; a value of any other type is encoded at every save.
//
// An entry holds no key the redaction rule names (a value with one is
// written otherwise than it is, and is never found unchanged) as long as
// the rule says so of its keys: a save asks the rule of them again, unless
// both it and the cache go by the default rule, which never changes its
// mind. The JSON is masked by mask: another set of secrets starts the
// cache over.
type depsCache struct {
	byDefault bool          // whether the entries were checked by the default rule, IsSecretKey
	mask      *jsonx.Masker // the secrets masked in the entries' JSON
	entries   map[string]*depsEntry
}

// depsEntry is a top-level value of the deps as a save wrote it.
type depsEntry struct {
	was  any                 // a copy of the value written (sanitized)
	json []byte              // its JSON
	keys map[string]struct{} // the keys of the maps in was, at any depth; nil for none
}
