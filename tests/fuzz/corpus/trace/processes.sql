UPDATE processes SET pid = -1, rank = 9223372036854775807, host = NULL;
