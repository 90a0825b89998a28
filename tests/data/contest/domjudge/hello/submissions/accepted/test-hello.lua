--[[
 - This should give CORRECT on the default problem 'hello'.
 -
 - @EXPECTED_RESULTS@: CORRECT
--]]
print "Hello world!"

