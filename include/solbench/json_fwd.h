/*
 * json_fwd.h — jansson's value, opaque: the public headers name json_t
 * without including <jansson.h>; a program that reads the documents
 * includes <jansson.h> itself (its typedef is the same one).
 */
#ifndef SOLBENCH_JSON_FWD_H
#define SOLBENCH_JSON_FWD_H

#ifndef SB_JSON_T_DECLARED
#define SB_JSON_T_DECLARED
typedef struct json_t json_t;
#endif

#endif
