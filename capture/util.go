package capture

import "os"

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
