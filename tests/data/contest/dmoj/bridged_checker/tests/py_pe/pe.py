print 'This is not a number'
