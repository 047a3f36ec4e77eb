package workflow

// latinLookalike returns the Latin letter a Cyrillic or Greek letter is
// drawn like (Unicode's confusables for those scripts, letters only), and
// whether r is one. The table is small on purpose: it covers what can
// spell the ASCII forbidden names, not every script.
func latinLookalike(r rune) (rune, bool) {
	switch r {
	// Cyrillic capitals
	case 'А':
		return 'A', true
	case 'В':
		return 'B', true
	case 'С':
		return 'C', true
	case 'Е':
		return 'E', true
	case 'Н':
		return 'H', true
	case 'І':
		return 'I', true
	case 'Ј':
		return 'J', true
	case 'К':
		return 'K', true
	case 'М':
		return 'M', true
	case 'О':
		return 'O', true
	case 'Р':
		return 'P', true
	case 'Ѕ':
		return 'S', true
	case 'Т':
		return 'T', true
	case 'Х':
		return 'X', true
	case 'У', 'Ү':
		return 'Y', true
	// Cyrillic small letters
	case 'а':
		return 'a', true
	case 'с':
		return 'c', true
	case 'ԁ':
		return 'd', true
	case 'е':
		return 'e', true
	case 'һ':
		return 'h', true
	case 'і':
		return 'i', true
	case 'ј':
		return 'j', true
	case 'ӏ':
		return 'l', true
	case 'о':
		return 'o', true
	case 'р':
		return 'p', true
	case 'ԛ':
		return 'q', true
	case 'ѕ':
		return 's', true
	case 'ԝ':
		return 'w', true
	case 'х':
		return 'x', true
	case 'у':
		return 'y', true
	// Greek capitals
	case 'Α':
		return 'A', true
	case 'Β':
		return 'B', true
	case 'Ε':
		return 'E', true
	case 'Ζ':
		return 'Z', true
	case 'Η':
		return 'H', true
	case 'Ι':
		return 'I', true
	case 'Κ':
		return 'K', true
	case 'Μ':
		return 'M', true
	case 'Ν':
		return 'N', true
	case 'Ο':
		return 'O', true
	case 'Ρ':
		return 'P', true
	case 'Τ':
		return 'T', true
	case 'Υ':
		return 'Y', true
	case 'Χ':
		return 'X', true
	// Greek small letters
	case 'α':
		return 'a', true
	case 'ι':
		return 'i', true
	case 'ο':
		return 'o', true
	case 'ρ':
		return 'p', true
	case 'υ':
		return 'u', true
	case 'ν':
		return 'v', true
	}
	return r, false
}
