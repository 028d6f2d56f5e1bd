module supraseal-c2/ffi-tests/go

go 1.19
