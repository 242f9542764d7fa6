UPDATE events SET process = NULL, phase = NULL, stack = 999 WHERE seq = 5;
