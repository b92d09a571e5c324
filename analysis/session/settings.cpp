#include "session/settings.h"

#include "session/plan_choices.h"

namespace shardlens::session {

plan::PlanOptions Settings::plan_options() const {
  plan::PlanOptions options;
  for (auto& m : meshes) {
    std::string error;
    if (auto mesh = plan::parse_mesh(m, error)) options.meshes.push_back(*mesh);
  }
  options.meshes_independent = meshes_independent;
  options.workload.batch = batch;
  options.workload.seq = seq;
  session::apply_choice(options, session::PlanChoice::Strategy, strategy);
  session::apply_choice(options, session::PlanChoice::Phase, phase);
  session::apply_choice(options, session::PlanChoice::Dtype, dtype);
  session::apply_choice(options, session::PlanChoice::Hardware, hardware);
  return options;
}

}  // namespace shardlens::session
