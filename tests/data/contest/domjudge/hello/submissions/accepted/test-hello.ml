print_endline "Hello world!"
