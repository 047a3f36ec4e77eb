package httpapi

import "testing"

// TestReadBufferSize: a body of known small length is read with a buffer
// its size, not 64 KiB; an unknown or large one with the 64 KiB buffer.
func TestReadBufferSize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		length int64
		want   int
	}{
		{-1, maxReadBuffer},
		{0, 1},
		{60, 61},
		{maxReadBuffer - 1, maxReadBuffer},
		{maxReadBuffer, maxReadBuffer},
		{32 << 20, maxReadBuffer},
	} {
		if got := readBufferSize(tt.length); got != tt.want {
			t.Errorf("readBufferSize(%d) = %d, want %d", tt.length, got, tt.want)
		}
	}
}
