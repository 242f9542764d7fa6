/*
 * capture/spool_reader.c - placeholder until the reader lands.
 */
#include "capture/spool_reader.h"
