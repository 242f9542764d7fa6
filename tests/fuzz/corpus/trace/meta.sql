UPDATE meta SET value = 'other' WHERE key = 'format';
