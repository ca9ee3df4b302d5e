"""The package version, in a leaf module so that every module can read it without importing the
package root (which re-exports the Python API)."""

__version__ = "0.1.0"
