UPDATE events SET ts_ns = 'x', address = X'00ff', stream = 1.5e300, device = 2147483648 WHERE seq = 2;
