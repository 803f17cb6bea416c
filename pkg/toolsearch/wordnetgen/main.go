// Command wordnetgen writes toolsearch's WordNet table (wordnet.txt) from
// WordNet 3.0's database as Debian's wordnet-base installs it
// (/usr/share/wordnet; licence: ../WORDNET-LICENSE). Each line is
// "stem synonyms hypernyms derived", the lists comma-separated ("-" when
// empty), all Snowball stems: for each common noun and verb (one tagged in
// WordNet's corpus at least once), the other words of its most frequent
// sense, for a noun those of that sense's hypernym, and the nouns and verbs
// derivationally related to it in that sense ("analysis" → "analyze").
// Only single lower-case words of common words are kept.
//
//	go run ./pkg/toolsearch/wordnetgen -dict /usr/share/wordnet > pkg/toolsearch/wordnet.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// entry is one word's expansion.
type entry struct{ syn, hyp, der map[string]bool }

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "WordNet database directory (index.noun, data.noun, ...)")
	flag.Parse()
	if err := run(*dict, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wordnetgen:", err)
		os.Exit(1)
	}
}

// run reads dict's nouns and verbs and writes the table to w, sorted.
func run(dict string, w io.Writer) error {
	common := map[string]bool{}
	firsts := map[string]map[string]int64{} // pos → word → offset of its first sense
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := readIndex(filepath.Join(dict, "index."+pos), common)
		if err != nil {
			return err
		}
		firsts[pos] = f
	}
	table := map[string]*entry{}
	for _, pos := range []string{"noun", "verb"} {
		if err := expand(filepath.Join(dict, "data."+pos), firsts[pos], common, pos == "noun", table); err != nil {
			return err
		}
	}
	if err := derive(dict, firsts, common, table); err != nil {
		return err
	}
	return write(w, table)
}

// readIndex returns the offset of each common single word's first sense in
// an index file, adding those words to common.
func readIndex(path string, common map[string]bool) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || strings.HasPrefix(sc.Text(), " ") || !isWord(fs[0]) {
			continue
		}
		ptrs, _ := strconv.Atoi(fs[3])
		if len(fs) < 7+ptrs {
			continue
		}
		tagged, _ := strconv.Atoi(fs[5+ptrs])
		off, err := strconv.ParseInt(fs[6+ptrs], 10, 64)
		if err != nil || tagged == 0 {
			continue
		}
		common[fs[0]] = true
		out[fs[0]] = off
	}
	return out, sc.Err()
}

// isWord reports whether s is a single lower-case ASCII word of 3 letters
// or more.
func isWord(s string) bool {
	if len(s) < 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
