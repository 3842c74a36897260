# SPDX-License-Identifier: Apache-2.0
# Writes OUT, a C file defining the bytes of IN (a FileDescriptorSet written by
# protoc --descriptor_set_out) as svc_grpc_descriptor_set and its length, for
# server reflection (service/http/svc_grpc_reflection.c).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" body "${body}")
file(WRITE ${OUT} "/* Generated from the .proto files by svc_grpc_embed.cmake: do not edit. */\n"
     "#include <stddef.h>\n"
     "extern const unsigned char svc_grpc_descriptor_set[];\n"
     "extern const size_t svc_grpc_descriptor_set_len;\n"
     "const unsigned char svc_grpc_descriptor_set[] = {\n${body}\n0};\n"
     "const size_t svc_grpc_descriptor_set_len = ${len};\n")
