// Calls an MXNet-era new-forward.cuh (ECE 408, 2017-2019) through profconv's mshadow stand-in:
// y (B x M x H_out x W_out, zeroed by the caller as MXNet did), x (B x C x H x W), w (M x C x K x K), device
// pointers, no padding, stride 1. forward<gpu, float> is the file's specialisation, or its generic template
// (Fall 2017) instantiated for float. The tensors are non-const lvalues, so a generic template whose
// parameters differ in const-ness from the stand-in's declaration is still the one called.
// Every name here starts with profconv_: student files define macros such as tx, ty, H, W or min.
#include <mxnet/base.h>
#include "new-forward.cuh"

extern "C" void profconv_course_forward(float* profconv_y, float* profconv_x, float* profconv_w, int profconv_b,
                                        int profconv_m, int profconv_c, int profconv_h, int profconv_wd, int profconv_k) {
  mshadow::Stream<mshadow::gpu> profconv_stream;
  mshadow::Tensor<mshadow::gpu, 4, float> profconv_ty(
      profconv_y, mshadow::Shape4(profconv_b, profconv_m, profconv_h - profconv_k + 1, profconv_wd - profconv_k + 1),
      &profconv_stream);
  mshadow::Tensor<mshadow::gpu, 4, float> profconv_tx(
      profconv_x, mshadow::Shape4(profconv_b, profconv_c, profconv_h, profconv_wd), &profconv_stream);
  mshadow::Tensor<mshadow::gpu, 4, float> profconv_tw(
      profconv_w, mshadow::Shape4(profconv_m, profconv_c, profconv_k, profconv_k), &profconv_stream);
  mxnet::op::forward<mshadow::gpu, float>(profconv_ty, profconv_tx, profconv_tw);
}

// The first failed CHECK_* or LOG(FATAL) of the file, or NULL.
extern "C" const char* profconv_mxnet_check_failure(void) {
  return profconv_shim::failure()[0] ? profconv_shim::failure() : 0;
}
