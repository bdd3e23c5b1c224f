package mcpcore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	_ "image/gif"  // image.DecodeConfig reads GIF headers
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG
	"math"
)

// MediaRule counts the tokens of the images and audio in a tool result as a
// model family reads them, not as base64 text.
//
// The zero MediaRule is the default: Anthropic's rule for images (an image
// is scaled to fit 1,568 pixels on its long side, then costs width x height
// / 750 tokens, at most 1,600) and Gemini's for audio (32 tokens a second).
// A MediaRule is a plain value.
type MediaRule struct {
	// PixelsPerToken is the number of pixels a token covers. Zero means 750.
	PixelsPerToken int
	// MaxEdge is the longest side an image is scaled down to before it is
	// counted. Zero means 1,568; negative means no scaling.
	MaxEdge int
	// MaxImageTokens caps what an image costs. Zero means 1,600; negative
	// means no cap.
	MaxImageTokens int
	// AudioTokensPerSecond is what a second of audio costs. Zero means 32.
	AudioTokensPerSecond int
}

func (m MediaRule) withDefaults() MediaRule {
	if m.PixelsPerToken <= 0 {
		m.PixelsPerToken = 750
	}
	if m.MaxEdge == 0 {
		m.MaxEdge = 1568
	}
	if m.MaxImageTokens == 0 {
		m.MaxImageTokens = 1600
	}
	if m.AudioTokensPerSecond <= 0 {
		m.AudioTokensPerSecond = 32
	}
	return m
}

// ImageTokens returns what an image costs, from its encoded bytes (PNG,
// JPEG or GIF; the header is enough), and whether its size could be read.
func (m MediaRule) ImageTokens(data []byte) (int, bool) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		if w, h, ok := webpSize(data); ok {
			cfg.Width, cfg.Height = w, h
		} else {
			return 0, false
		}
	}
	return m.imageTokens(cfg.Width, cfg.Height), true
}

func (m MediaRule) imageTokens(w, h int) int {
	m = m.withDefaults()
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); m.MaxEdge > 0 && long > float64(m.MaxEdge) {
		scale := float64(m.MaxEdge) / long
		fw, fh = fw*scale, fh*scale
	}
	t := int(math.Ceil(fw * fh / float64(m.PixelsPerToken)))
	if m.MaxImageTokens > 0 {
		t = min(t, m.MaxImageTokens)
	}
	return max(t, 1)
}

// AudioTokens returns what a recording costs, from its encoded bytes: its
// duration read from a WAV header, or else estimated at 128 kbit/s.
func (m MediaRule) AudioTokens(data []byte) int {
	m = m.withDefaults()
	seconds := float64(len(data)) / 16000 // 128 kbit/s
	if d, ok := wavSeconds(data); ok {
		seconds = d
	}
	return max(int(math.Ceil(seconds*float64(m.AudioTokensPerSecond))), 1)
}

// wavSeconds reads the duration of a RIFF/WAVE recording.
func wavSeconds(b []byte) (float64, bool) {
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, false
	}
	byteRate := binary.LittleEndian.Uint32(b[28:32])
	if byteRate == 0 {
		return 0, false
	}
	// The data chunk follows the fmt chunk, usually at 36.
	for i := 12; i+8 <= len(b); {
		size := int(binary.LittleEndian.Uint32(b[i+4 : i+8]))
		if string(b[i:i+4]) == "data" {
			return float64(size) / float64(byteRate), true
		}
		if size < 0 || i+8+size < i {
			break
		}
		i += 8 + size + size%2
	}
	return float64(len(b)-44) / float64(byteRate), true
}

// webpSize reads the canvas size of a WebP image (VP8X, VP8 or VP8L).
func webpSize(b []byte) (int, int, bool) {
	if len(b) < 30 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, false
	}
	switch string(b[12:16]) {
	case "VP8X":
		w := 1 + int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := 1 + int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return w, h, true
	case "VP8 ":
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff), true
	case "VP8L":
		v := binary.LittleEndian.Uint32(b[21:25])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, true
	}
	return 0, 0, false
}

// decodeBase64 decodes the data of a media block: standard base64, with
// or without padding.
func decodeBase64(s string) ([]byte, bool) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, true
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	return b, err == nil
}
