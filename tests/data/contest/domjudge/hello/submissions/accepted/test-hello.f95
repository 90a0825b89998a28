!
! This should give CORRECT on the default problem 'hello'.
!
! @EXPECTED_RESULTS@: CORRECT
!
program hello
    write(*,"(A)") "Hello world!"
end program hello

