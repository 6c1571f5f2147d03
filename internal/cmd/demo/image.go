package demo

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
)

// pixels is an RGBA8 image read back from the GPU.
type pixels struct {
	w, h int
	pix  []byte // 4 bytes a pixel, rows top to bottom
}

func (p pixels) image() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	copy(img.Pix, p.pix)
	return img
}

func writePNG(path string, p pixels) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, p.image()); err != nil {
		f.Close()
		return fmt.Errorf("png %s: %w", path, err)
	}
	return f.Close()
}
