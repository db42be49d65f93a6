package nous_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The root package is built in layers, which the README's Layout table
// gives: each file of it is in one layer, and refers only to names
// declared in its own layer or a lower one (a method, a field's type, a
// type, a function, a constant: whatever the type checker resolves to a
// package-level declaration or a method). So the values know nothing of the log, the log nothing of the
// codec, the codec nothing of the context, and the context nothing of
// compaction, persistence and tools, which sit on top.
func TestLayers(t *testing.T) {
	layers := readLayers(t, "README.md")
	refs := packageRefs(t, ".")
	for file := range refs.files {
		if _, ok := layers[file]; !ok {
			t.Errorf("%s is in no layer of the README's Layout table", file)
		}
	}
	for file := range layers {
		if !refs.files[file] {
			t.Errorf("the README's Layout table lists %s, which is not a file of the package", file)
		}
	}
	var wrong []string
	for _, r := range refs.refs {
		if layers[r.to] > layers[r.from] {
			wrong = append(wrong, fmt.Sprintf("%s (layer %d) refers to %s of %s (layer %d)", r.at, layers[r.from], r.name, r.to, layers[r.to]))
		}
	}
	slices.Sort(wrong)
	wrong = slices.Compact(wrong)
	for _, w := range wrong {
		t.Error(w)
	}
	if len(refs.refs) < 500 {
		t.Fatalf("only %d references between files found: the check reads too little to mean anything", len(refs.refs))
	}
}

// A file that refers to a name of a higher layer is found, whether the
// name is a function, a method, a type or a constant: the check of
// TestLayers fails on it.
func TestLayersFindsAnUpwardReference(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":     "module example.com/layers\n\ngo 1.24\n",
		"low.go":     "package layers\n\ntype Low struct{ n int }\n\nfunc (l *Low) Up() int { return l.Next() + int(Limit) + len(Name()) }\n",
		"high.go":    "package layers\n\nconst Limit = 3\n\nfunc Name() string { return \"high\" }\n\nfunc (l *Low) Next() int { return l.n }\n",
		"README.md":  "## Layout\n\n| layer | files | holds |\n| --- | --- | --- |\n| 1 low | `low.go` | the low |\n| 2 high | `high.go` | the high |\n",
		"unused.txt": "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	layers := readLayers(t, filepath.Join(dir, "README.md"))
	refs := packageRefs(t, dir)
	var up []string
	for _, r := range refs.refs {
		if layers[r.to] > layers[r.from] {
			up = append(up, r.name)
		}
	}
	slices.Sort(up)
	if want := []string{"Limit", "Name", "Next"}; !slices.Equal(slices.Compact(up), want) {
		t.Fatalf("upward references found: %v, want %v", up, want)
	}
}

// readLayers reads the layer of each file from the Layout table of the
// README at path: rows "| 2 log | `a.go`, `b.go` | ... |".
func readLayers(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\| (\d+) [^|]*\|([^|]*)\|`)
	name := regexp.MustCompile("`([^`]+\\.go)`")
	layers := map[string]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layout"
			continue
		}
		m := row.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, f := range name.FindAllStringSubmatch(m[2], -1) {
			if was, ok := layers[f[1]]; ok {
				t.Errorf("%s: %s is in layers %d and %d", path, f[1], was, n)
			}
			layers[f[1]] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(layers) == 0 {
		t.Fatalf("%s: no layer table under ## Layout", path)
	}
	return layers
}

// ref is a reference from one file of a package to a name another file
// declares.
type ref struct {
	from, to, name string
	at             string // file:line of the reference
}

type packageInfo struct {
	files map[string]bool // the package's files, tests excluded
	refs  []ref
}

// packageRefs type-checks the package in dir (its files but the tests) and
// returns every reference from one of its files to a package-level name,
// method or field type declared in another. Imports are read from the
// export data `go list -export` gives.
func packageRefs(t *testing.T, dir string) packageInfo {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's imports:", err)
	}
	cmd := exec.Command(goCmd, "list", "-export", "-deps", "-json=ImportPath,Export", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off") // the package's own module, in or out of a workspace
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	info := packageInfo{files: map[string]bool{}}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		info.files[filepath.Base(name)] = true
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) }
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	uses := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check("layers", fset, files, uses)
	if err != nil {
		t.Fatalf("type-checking %s: %v", dir, err)
	}
	for id, obj := range uses.Uses {
		if obj.Pkg() != pkg || !declaredAtTop(pkg, obj) {
			continue
		}
		from, to := fset.Position(id.Pos()), fset.Position(obj.Pos())
		if from.Filename == to.Filename {
			continue
		}
		info.refs = append(info.refs, ref{
			from: filepath.Base(from.Filename), to: filepath.Base(to.Filename), name: obj.Name(),
			at: fmt.Sprintf("%s:%d", filepath.Base(from.Filename), from.Line),
		})
	}
	return info
}

// declaredAtTop reports whether obj is declared at the top of pkg: a
// package-level name, or a method (whose file is its declaration's, not
// its type's).
func declaredAtTop(pkg *types.Package, obj types.Object) bool {
	if f, ok := obj.(*types.Func); ok {
		if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() != nil {
			return true
		}
	}
	return obj.Parent() == pkg.Scope()
}
