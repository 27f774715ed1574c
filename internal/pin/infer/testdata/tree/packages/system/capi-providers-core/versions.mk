# in the package: read
CAPI_VERSION := v1.10.1
override CORE_SERIES = v1.10
