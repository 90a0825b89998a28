This is not a valid C header file!
