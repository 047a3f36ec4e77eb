package agui_test

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // silence gin's route debug lines
	os.Exit(m.Run())
}
