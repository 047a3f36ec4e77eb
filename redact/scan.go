package redact

// scanner finds whether a text holds any of a set of non-empty needles in
// one pass over it, whatever the number of needles: the Redactor's
// pre-check, which lets text holding no secret (nearly all of it) through
// without the strings.Replacer pass and copy. Looking for each needle
// with strings.Index instead costs a pass per needle: 5× slower than the
// Replacer itself with 20 secrets (about 90 needles) on text rich in their
// first bytes.
//
// When every needle is at least minWindow bytes long, the scan skips
// bytes (Wu–Manber, see scanSkip): on a 20 kB Stage 1 prompt it reads one
// block of two bytes per 34 bytes with the gateway's one model key (a
// 35-byte window) and one per 16 with 20 secrets (an 18-byte window).
// Otherwise it looks at every byte (scanBytes): with needles of 4 bytes or
// fewer the shifts are too short to pay for the table lookup that each
// one waits on.
type scanner struct {
	first  [256 / 64]uint64     // first bytes of the needles
	single [256 / 64]uint64     // one-byte needles
	pair   [1 << 16 / 64]uint64 // first two bytes of the longer needles
	byPair map[uint16][]string  // the longer needles by their first two bytes

	// window is the length m of the text window scanSkip slides: the
	// shortest needle's, at most maxWindow; 0 when scanBytes is used.
	window int
	// shift holds, for each block of two bytes b0 b1 (index b0 | b1<<8),
	// how far the window may move when it ends in that block: m-1-q for
	// the last position q (1 ≤ q < m) at which the block ends in some
	// needle's first m bytes, m-1 when it ends in none. 64 KiB per
	// scanner; tables indexed by a hash or by 7 bits of each byte are
	// smaller but 30 % slower (a longer chain of dependent operations
	// between one lookup and the next).
	shift *[1 << 16]uint8
	// fold: the needles are lower-case ASCII and match text in any ASCII
	// case. The bitsets and shifts hold every case variant, so the scans
	// read the text as it is; only a candidate is compared folded.
	fold bool
}

const (
	// minWindow is the shortest needle length at which scanSkip is used.
	// Against scanBytes (BenchmarkScan, medians of 6): at 4 bytes 1.7×
	// slower on needles of bytes rare in a prompt, 1.9× faster on common
	// letters; at 5 as fast (rare) to 1.6× faster (common); at 8 1.4× to
	// 4.9× faster.
	minWindow = 5
	// maxWindow keeps every shift within a byte.
	maxWindow = 256
)

func newScanner(needles []string) *scanner { return newScannerSkipping(needles, minWindow, false) }

// newScannerSkipping is newScanner with scanSkip used from windows of
// from bytes (at least 2) up; fold: see scanner.fold.
func newScannerSkipping(needles []string, from int, fold bool) *scanner {
	s := &scanner{byPair: map[uint16][]string{}, fold: fold}
	m := 0
	for _, n := range needles {
		switch len(n) {
		case 0:
			continue
		case 1:
			for _, c := range s.variants(n[0]) {
				set(s.single[:], uint(c))
			}
		default:
			for _, c0 := range s.variants(n[0]) {
				for _, c1 := range s.variants(n[1]) {
					set(s.pair[:], uint(uint16(c0)<<8|uint16(c1)))
				}
			}
			k := uint16(n[0])<<8 | uint16(n[1])
			s.byPair[k] = append(s.byPair[k], n)
		}
		for _, c := range s.variants(n[0]) {
			set(s.first[:], uint(c))
		}
		if m == 0 || len(n) < m {
			m = len(n)
		}
	}
	if m < from {
		return s
	}
	m = min(m, maxWindow)
	s.window, s.shift = m, new([1 << 16]uint8)
	s.shift[0] = uint8(m - 1)
	for i := 1; i < len(s.shift); i *= 2 {
		copy(s.shift[i:], s.shift[:i])
	}
	for _, n := range needles {
		if n == "" {
			continue
		}
		for q := 1; q < m; q++ {
			for _, c0 := range s.variants(n[q-1]) {
				for _, c1 := range s.variants(n[q]) {
					b := uint16(c0) | uint16(c1)<<8
					s.shift[b] = min(s.shift[b], uint8(m-1-q))
				}
			}
		}
	}
	return s
}

// variants are the bytes c stands for in text: c, and its upper case too
// when the scanner folds a lower-case letter.
func (s *scanner) variants(c byte) []byte {
	if s.fold && 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// lowerByte is c in lower case when it is an ASCII letter.
func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

// key is the byPair key of the two bytes at i of text.
func (s *scanner) key(c0, c1 byte) uint16 {
	if s.fold {
		c0, c1 = lowerByte(c0), lowerByte(c1)
	}
	return uint16(c0)<<8 | uint16(c1)
}

func set(bits []uint64, i uint)      { bits[i/64] |= 1 << (i % 64) }
func has(bits []uint64, i uint) bool { return bits[i/64]&(1<<(i%64)) != 0 }

// scan reports whether text holds any needle.
func scan[T string | []byte](s *scanner, text T) bool {
	if s.shift == nil {
		return scanBytes(s, text)
	}
	return scanSkip(s, text)
}

// scanSkip is scan by Wu–Manber with blocks of two bytes. It slides a
// window of m bytes (m ≤ every needle's length) over text and looks only
// at the block b the window ends in. Moving the window by shift[b] skips
// no occurrence: a needle starting t < shift[b] bytes after the window's
// first byte would hold b ending at position m-1-t ≥ 1 of its first m
// bytes, and then shift[b] ≤ t. Shift 0 means some needle's first m bytes end in b: the
// needles starting with the window's first two bytes are compared there
// and the window moves one byte. Text shorter than m holds no needle.
func scanSkip[T string | []byte](s *scanner, text T) bool {
	m := s.window
	for j := m - 1; j < len(text); { // j: the window's last byte
		if d := s.shift[uint16(text[j-1])|uint16(text[j])<<8]; d != 0 {
			j += int(d)
			continue
		}
		i := j - m + 1
		if has(s.pair[:], uint(uint16(text[i])<<8|uint16(text[i+1]))) {
			for _, n := range s.byPair[s.key(text[i], text[i+1])] {
				if hasAt(text, i, n, s.fold) {
					return true
				}
			}
		}
		j++
	}
	return false
}

// scanBytes is scan for short needles. A position is looked at further
// only when its byte starts some needle and its two bytes start one (two
// bitsets); then only the needles with those two first bytes are compared
// there.
func scanBytes[T string | []byte](s *scanner, text T) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !has(s.first[:], uint(c)) {
			continue
		}
		if has(s.single[:], uint(c)) {
			return true
		}
		if i+1 == len(text) {
			return false
		}
		if !has(s.pair[:], uint(uint16(c)<<8|uint16(text[i+1]))) {
			continue
		}
		for _, n := range s.byPair[s.key(c, text[i+1])] {
			if hasAt(text, i, n, s.fold) {
				return true
			}
		}
	}
	return false
}

// hasAt reports whether text holds n at i (in any ASCII case when fold).
func hasAt[T string | []byte](text T, i int, n string, fold bool) bool {
	if len(text)-i < len(n) {
		return false
	}
	for k := range len(n) {
		c := text[i+k]
		if fold {
			c = lowerByte(c)
		}
		if c != n[k] {
			return false
		}
	}
	return true
}
