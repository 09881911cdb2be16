// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Adamax, NAdam, RAdam, Adadelta, ASGD, Rprop and LBFGS on the device under
// test: trajectories against PyTorch's, parameter groups, state_dict round
// trips (scalar state included), 16-bit master weights, LBFGS on Rosenbrock
// and the typed errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "support/device_under_test.hpp"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;
namespace opt = vnn::optim;

namespace {

using Trajectory = std::vector<std::vector<double>>;

// The parameter after each step, from PyTorch 2.15 in float64 (scalar state
// too: torch.set_default_dtype(torch.float64)), printed by
//   ~/.cache/vnn/torch2-venv/bin/python tests/optim/optimizers_more_torch.py
// on loss(p) = sum(w (p - t)^2) + sum(cos(3 p)) / 6 from p0 (below).
const std::map<std::string, Trajectory>& torch_reference() {
  static const std::map<std::string, Trajectory> ref = {
    {"Adamax",
     {{0.70000000094138171, -1.10000000010182, 0.20000000164382692, 1.9000000004673536},
      {0.61447483120865631, -1.0038822945096262, 0.1007164373093701, 1.8064091420841275},
      {0.54140087210703902, -0.9117042528348811, 0.0044598987096171189, 1.7195454241346442},
      {0.47899386920826126, -0.82347981729280229, -0.088400359676526874, 1.6397603403571477},
      {0.42572151372758449, -0.73918332691033528, -0.17876261488572492, 1.5673853519816037},
      {0.38028660193729713, -0.65875502681648657, -0.26806488842900261, 1.5026858220753094},
      {0.34159826505530905, -0.58210747858383649, -0.35801791669654676, 1.4458263788937116},
      {0.30874065210379653, -0.50913219667015497, -0.44959340512013979, 1.3968494099191353}}},
    {"Adamax_wd_max",
     {{0.84999999949097416, -1.2499999999484603, 0.34999999913545149, 2.0499999997422291},
      {0.89699005560402267, -1.2992058922330447, 0.39988715155989429, 2.0986881785908085},
      {0.94197257605500417, -1.3477675598839429, 0.44919339987938811, 2.1463701017226362},
      {0.98558601135386525, -1.3958131703491106, 0.4975324807336215, 2.193259538765711},
      {1.0282654323853209, -1.4434522445085938, 0.54465915352495942, 2.2395092809211978},
      {1.0703217164686725, -1.4907781461551233, 0.59048300757082739, 2.2852303814912212},
      {1.1119848202509377, -1.5378701351699984, 0.6350429502023005, 2.3305049106671833},
      {1.1534293089832781, -1.584795087482388, 0.67846390471227014, 2.37539480089786}}},
    {"NAdam",
     {{0.69435482315898556, -1.094354822272029, 0.19435482390108505, 1.8943548226581977},
      {0.62876400982123304, -1.0189397601561905, 0.11538283400927277, 1.8210239568198792},
      {0.57388989451939776, -0.95014712342908214, 0.040089724030482249, 1.7557790012601679},
      {0.52465383141655497, -0.88300254986538529, -0.036771738476086599, 1.6941101251033797},
      {0.47981446919561838, -0.81609311993278844, -0.11685636216325254, 1.6353137264654976},
      {0.43911270971180322, -0.7491098324146479, -0.20041181874710826, 1.5799276532241542},
      {0.40253002754567346, -0.68213959137658153, -0.28685312725522361, 1.5289379985781271},
      {0.37006105659599209, -0.61540544326844504, -0.37497075960513149, 1.4834055287642334}}},
    {"NAdam_wd",
     {{0.69435100619220613, -1.0943510053735741, 0.1943510069223682, 1.8943510057188488},
      {0.62816416240632678, -1.0189457926414591, 0.1159802376551746, 1.8207435226619477},
      {0.57245493974659212, -0.95017036545778255, 0.041598523780472865, 1.7550385508814861},
      {0.52215098663503068, -0.88304859934865376, -0.034057098775046202, 1.6926749134663179},
      {0.4760096008505364, -0.81616626436058537, -0.11264663617334032, 1.6328740820946899},
      {0.43378420965302439, -0.74921345043673415, -0.19444064681088058, 1.5760949705892349},
      {0.39548234065916743, -0.68227674603884003, -0.27889587094561785, 1.523258606302756},
      {0.3611339276685317, -0.61557956908681211, -0.36485491226689298, 1.4753962715732605}}},
    {"NAdam_decoupled",
     {{0.68635482315898555, -1.0823548222720289, 0.19135482390108505, 1.8743548226581976},
      {0.61502992945664081, -0.99647858079426277, 0.11042672732047415, 1.783412376680364},
      {0.55584332278237891, -0.91835603818396949, 0.033925880974497571, 1.7027100509202244},
      {0.50350163519644608, -0.84292689074721672, -0.043403445656827327, 1.628069842146687},
      {0.45661049593772912, -0.76874681502425402, -0.1231565504645725, 1.5592845776089528},
      {0.41475871940703141, -0.69548206720791927, -0.20550684621405335, 1.4974007093677106},
      {0.37777657490839128, -0.6231893684639791, -0.28981869836789564, 1.4437613148709036},
      {0.34551696737418464, -0.55205455968168871, -0.37489028549257575, 1.399458537223341}}},
    {"RAdam",
     {{0.69377315902755754, -0.21787397783525708, 0.23916634548137417, 1.7860292250900538},
      {0.60391298072616129, 0.42645997849390782, 0.1782232902376677, 1.603440086491307},
      {0.52793961283671509, 0.84484631537091626, 0.11676310466519441, 1.4545973227366451},
      {0.46370838095678735, 1.072255151991317, 0.054413809887907456, 1.3406516776731727},
      {0.40941211551447526, 1.1447185589633309, -0.0091482065858604147, 1.2606823672673171},
      {0.38807640413655681, 1.1424891294991826, -0.034627048595212512, 1.249103242621558},
      {0.36190212514818271, 1.1339770162657163, -0.067572782248318836, 1.2407657078798788},
      {0.33249967598176411, 1.1189170392936423, -0.10670720246498118, 1.2376359725365846}}},
    {"RAdam_wd",
     {{0.68577315902755753, -0.20587397783525718, 0.23616634548137416, 1.7660292250900538},
      {0.58965824882623208, 0.44220057127570223, 0.17253800396193592, 1.5679702867307588},
      {0.50878615048346687, 0.85806099511449174, 0.10868441042920145, 1.408727923187689},
      {0.44070196919380178, 1.0783979647624582, 0.044224141579132181, 1.2894559852530445},
      {0.38336198146993172, 1.1417588021156344, -0.02116167467377876, 1.2086133466029838},
      {0.3622279894112595, 1.139087630050764, -0.046657294732189311, 1.1985842624790415},
      {0.33634707959958821, 1.1301071165690919, -0.079629960214790935, 1.1924807113279099},
      {0.30730240503802519, 1.1145852510144656, -0.11880153389207182, 1.1919982529862736}}},
    {"RAdam_decoupled",
     {{0.68577315902755753, -0.20587397783525707, 0.23616634548137416, 1.7660292250900538},
      {0.59019932333610159, 0.43749155327597455, 0.17284037390439255, 1.5690785693487532},
      {0.51022385985118512, 0.84731615264954196, 0.10957942607723906, 1.4116101875651699},
      {0.44325764614437924, 1.0627628411519376, 0.045996466590990819, 1.2943112943622284},
      {0.38716039522332885, 1.1236994426864466, -0.018228992562757035, 1.2152282914977568},
      {0.36259544933961069, 1.1103531302486729, -0.043522268212970186, 1.1954078740785437},
      {0.33388222657564454, 1.0910629075310394, -0.076028362023623286, 1.1812051261117977},
      {0.30276659433326902, 1.065647067520223, -0.11439774689312737, 1.1740917807925479}}},
    {"Adadelta",
     {{0.7968377363517819, -1.196837722503753, 0.29683776506397747, 1.996837725793339},
      {0.79360761491985266, -1.1935969372292028, 0.29359387726199176, 1.9935991369163286},
      {0.79034102669974593, -1.1903048634701821, 0.29029418036658033, 1.9903123314731235},
      {0.78705365775857272, -1.186974936267162, 0.28695123800776334, 1.9869912421755422},
      {0.78375489367244622, -1.1836151437609055, 0.28357238304362614, 1.983644188413846},
      {0.78045095357967442, -1.1802307714890281, 0.28016235925617528, 1.9802766980631583},
      {0.77714623598494526, -1.1768255689844929, 0.27672444183555167, 1.9768927093655178},
      {0.77384399383663227, -1.1734023297142608, 0.27326099337572884, 1.9734951694283014}}},
    {"Adadelta_wd",
     {{0.78882180169044824, -1.1888196883945248, 0.2888265133556211, 1.9888201706669197},
      {0.77720686527436289, -1.1770788361479747, 0.27706263299469935, 1.9771030915026546},
      {0.7654091180809971, -1.1649758350712724, 0.26488689790104336, 1.9650583921123046},
      {0.75355691644301459, -1.1526084485717225, 0.25238065653892089, 1.9527911050397235},
      {0.74172651412965596, -1.1400349210857399, 0.23958717250790929, 1.9403649422446987},
      {0.72996713074164077, -1.1272939408693983, 0.22653089601921644, 1.9278231135276833},
      {0.71831199941944901, -1.1144131013340099, 0.21322564092932964, 1.9151972037994023},
      {0.70678406391276405, -1.1014131041826283, 0.19967866412551707, 1.9025116069235048}}},
    {"ASGD",
     {{0.69376515902755753, -0.21786197783525718, 0.23916334548137416, 1.7860092250900539},
      {0.618630789333525, 0.122452974518361, 0.1781198567222893, 1.6316530515510166},
      {0.56288101368001675, 0.30693478934987212, 0.11577152473493094, 1.5298080267437295},
      {0.51995335343252513, 0.40257312778657789, 0.051213365017737218, 1.4682484361552057},
      {0.48595551312427415, 0.4477642930133196, -0.016254641828283723, 1.4332829409863295},
      {0.45844209296344957, 0.46781211366847447, -0.087063589863085641, 1.4141508824777203},
      {0.43579793301040554, 0.47642117872101447, -0.16126457707930375, 1.4038969933832854},
      {0.41691046311597274, 0.48006356318749188, -0.2383895009408063, 1.3984620569418034}}},
    {"ASGD_wd",
     {{0.84871342048622134, -1.6844630110823715, 0.32876682725931294, 2.0959853874549732},
      {0.90488071502847878, -2.3239380363043178, 0.35753999932846592, 2.2035083969946583},
      {0.97000696298441635, -3.112056850730581, 0.38647468015751818, 2.3239924206936426},
      {1.045878048602241, -4.1455704608395054, 0.41573654141949867, 2.4600168409813481},
      {1.1345259581291891, -5.4883312775093884, 0.44550453793182404, 2.6160895953180043},
      {1.2380842576400872, -7.2396262379582685, 0.47597439865911573, 2.7996900722268716},
      {1.3584495496041125, -9.4816127443886415, 0.50736293724863568, 3.022518764429948},
      {1.4966778373996601, -12.393099032237171, 0.53991332394806046, 3.301169634916933}}},
    {"Rprop",
     {{0.70000000000000007, -1.0999999999999999, 0.19999999999999998, 1.8999999999999999},
      {0.58000000000000007, -0.97999999999999987, 0.079999999999999988, 1.7799999999999998},
      {0.43600000000000005, -0.83599999999999985, -0.064000000000000001, 1.6359999999999999},
      {0.2632000000000001, -0.6631999999999999, -0.23679999999999998, 1.4631999999999998},
      {0.2632000000000001, -0.45583999999999991, -0.44415999999999994, 1.2558399999999998},
      {0.34960000000000008, -0.20700799999999997, -0.69299199999999983, 1.2558399999999998},
      {0.34960000000000008, 0.091590399999999961, -0.99159039999999976, 1.3595199999999998},
      {0.30640000000000006, 0.44990847999999989, -0.99159039999999976, 1.4839359999999999}}},
    {"Rprop_bounds",
     {{0.5, -0.89999999999999991, 0, 1.7},
      {0.099999999999999978, -0.49999999999999989, -0.40000000000000002, 1.2999999999999998},
      {0.099999999999999978, -0.099999999999999867, -0.80000000000000004, 1.2999999999999998},
      {0.21999999999999997, 0.30000000000000016, -1.2000000000000002, 1.4199999999999999},
      {0.39999999999999997, 0.70000000000000018, -1.2000000000000002, 1.4199999999999999},
      {0.39999999999999997, 0.70000000000000018, -1.0800000000000001, 1.3699999999999999},
      {0.34599999999999997, 0.58000000000000018, -0.90000000000000013, 1.3699999999999999},
      {0.26499999999999996, 0.40000000000000019, -0.90000000000000013, 1.4199999999999999}}},
    {"LBFGS",
     {{0.48243389297520867, 0.2684811950457564, -0.062840611955778072, 1.4303221010472618},
      {0.26677421726207828, 0.56462260342708182, -0.84583219046966063, 1.3722440324135103},
      {0.27123676618017434, 0.48736853117550999, -0.90135440571114644, 1.3909624091427453}}},
    {"LBFGS_wolfe",
     {{0.13518602831942003, 0.69986359234486784, -0.9476382876709416, 1.3629504627914864},
      {0.24026082971134635, 0.48565311525744892, -0.89239512435565116, 1.395078583699157},
      {0.29177181030712102, 0.48275199170466609, -0.90591774685612503, 1.3922627067926772}}},
  };
  return ref;
}

const std::vector<double> kP0 = {0.8, -1.2, 0.3, 2.0};
const std::vector<double> kW = {1.0, 3.0, 0.5, 2.0};
const std::vector<double> kT = {0.1, 0.4, -0.7, 1.5};

Tensor constant(const std::vector<double>& v, const Tensor& like) {
  return from_vector(v, Shape{int64_t(v.size())}, like.device()).to(like.dtype());
}

// The test problem's loss, differentiable (LBFGS's closure).
Tensor loss_of(const Tensor& p) {
  Tensor d = p - constant(kT, p);
  return (constant(kW, p) * d * d).sum() + cos(p * 3.0).sum() / 6.0;
}

// Its gradient, set directly: 2 w (p - t) - sin(3 p) / 2.
void set_grad(const Tensor& p) {
  autograd::NoGradGuard no_grad;
  Tensor g = (p.detach() - constant(kT, p)) * constant(kW, p) * 2.0 - sin(p.detach() * 3.0) * 0.5;
  Tensor(p).set_grad(g);
}

Tensor make_param(const Device& dev, DType dt) {
  Tensor p = from_vector(kP0, Shape{4}, dev).to(dt);
  p.requires_grad_();
  return p;
}

using Factory = std::function<std::unique_ptr<opt::Optimizer>(std::vector<Tensor>)>;

template <class O, class Options>
Factory factory(Options o) {
  return [o](std::vector<Tensor> p) { return std::unique_ptr<opt::Optimizer>(new O(std::move(p), o)); };
}

// The C++ spelling of each configuration of optimizers_more_torch.py.
const std::map<std::string, Factory>& configurations() {
  static const std::map<std::string, Factory> f = {
      {"Adamax", factory<opt::Adamax>(opt::AdamaxOptions(0.1))},
      {"Adamax_wd_max", factory<opt::Adamax>(opt::AdamaxOptions(0.05).betas(0.8, 0.99).weight_decay(0.1).maximize(true))},
      {"NAdam", factory<opt::NAdam>(opt::NAdamOptions(0.1))},
      {"NAdam_wd", factory<opt::NAdam>(opt::NAdamOptions(0.1).weight_decay(0.1).momentum_decay(0.01))},
      {"NAdam_decoupled", factory<opt::NAdam>(opt::NAdamOptions(0.1).weight_decay(0.1).decoupled_weight_decay(true))},
      {"RAdam", factory<opt::RAdam>(opt::RAdamOptions(0.1).betas(0.9, 0.9))},
      {"RAdam_wd", factory<opt::RAdam>(opt::RAdamOptions(0.1).betas(0.9, 0.9).weight_decay(0.1))},
      {"RAdam_decoupled",
       factory<opt::RAdam>(opt::RAdamOptions(0.1).betas({0.9, 0.9}).weight_decay(0.1).decoupled_weight_decay(true))},
      {"Adadelta", factory<opt::Adadelta>(opt::AdadeltaOptions())},
      {"Adadelta_wd", factory<opt::Adadelta>(opt::AdadeltaOptions(0.5).rho(0.8).eps(1e-4).weight_decay(0.1))},
      {"ASGD", factory<opt::ASGD>(opt::ASGDOptions(0.1).t0(3))},
      {"ASGD_wd",
       factory<opt::ASGD>(opt::ASGDOptions(0.05).lambd(0.01).alpha(0.5).t0(0).weight_decay(0.1).maximize(true))},
      {"Rprop", factory<opt::Rprop>(opt::RpropOptions(0.1))},
      {"Rprop_bounds", factory<opt::Rprop>(opt::RpropOptions(0.3).etas({0.3, 1.5}).step_sizes({0.05, 0.4}))},
  };
  return f;
}

std::vector<double> values(const Tensor& p) { return p.detach().to(kFloat64).to(Device("cpu", 0)).to_vector<double>(); }

// Largest |got - want| over the four elements.
double max_diff(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double m = 0;
  for (size_t i = 0; i < got.size(); ++i) m = std::max(m, std::abs(got[i] - want[i]));
  return m;
}

// Runs `steps` steps of o on p, checking each against ref[first + k].
void follow(opt::Optimizer& o, const Tensor& p, const Trajectory& ref, size_t first, size_t steps, double tol) {
  for (size_t k = first; k < first + steps; ++k) {
    o.zero_grad();
    set_grad(p);
    o.step();
    INFO("step " << k + 1);
    CHECK(max_diff(values(p), ref[k]) <= tol);
  }
}

}  // namespace

TEST_CASE("Adamax, NAdam, RAdam, Adadelta, ASGD and Rprop follow PyTorch's trajectories") {
  const Device dev = device_under_test();
  for (auto& [name, make] : configurations()) {
    const Trajectory& ref = torch_reference().at(name);
    for (DType dt : {kFloat64, kFloat32}) {
      INFO(name << " in " << ::vnn::name(dt));
      Tensor p = make_param(dev, dt);
      auto o = make({p});
      follow(*o, p, ref, 0, ref.size(), dt == kFloat64 ? 1e-12 : 2e-5);
    }
  }
}

TEST_CASE("The new optimizers' state_dict resumes a trajectory exactly, scalar state included") {
  const Device dev = device_under_test();
  for (auto& [name, make] : configurations()) {
    INFO(name);
    const Trajectory& ref = torch_reference().at(name);
    Tensor p = make_param(dev, kFloat64);
    auto o = make({p});
    follow(*o, p, ref, 0, 4, 1e-12);
    opt::StateDict saved = o->state_dict();
    if (name.rfind("NAdam", 0) == 0 || name.rfind("ASGD", 0) == 0) {
      bool has_scalar = false;
      for (auto& [k, v] : saved) has_scalar |= (k == "state.0.mu_product" || k == "state.0.mu") && v.dim() == 0;
      CHECK(has_scalar);
    }
    // A fresh optimizer over a copy of the parameter continues where o stopped.
    Tensor q = p.detach().clone();
    q.requires_grad_();
    auto resumed = make({q});
    resumed->load_state_dict(saved);
    follow(*resumed, q, ref, 4, ref.size() - 4, 1e-12);
  }
}

TEST_CASE("Parameter groups of the new optimizers take their own options") {
  const Device dev = device_under_test();
  Tensor a = make_param(dev, kFloat64), b = make_param(dev, kFloat64);
  std::vector<opt::ParamGroup> groups = {opt::ParamGroup({a}),
                                         opt::ParamGroup({b}, {{"lr", 0.3}, {"etaminus", 0.3}, {"etaplus", 1.5},
                                                               {"step_size_min", 0.05}, {"step_size_max", 0.4}})};
  opt::Rprop o(groups, opt::RpropOptions(0.1));
  const Trajectory& ra = torch_reference().at("Rprop");
  const Trajectory& rb = torch_reference().at("Rprop_bounds");
  for (size_t k = 0; k < ra.size(); ++k) {
    o.zero_grad();
    set_grad(a);
    set_grad(b);
    o.step();
    CHECK(max_diff(values(a), ra[k]) <= 1e-12);
    CHECK(max_diff(values(b), rb[k]) <= 1e-12);
  }
  CHECK(o.param_groups()[1].options.at("etaplus") == 1.5);
  CHECK(o.param_groups()[0].options.at("step_size_max") == 50);
}

TEST_CASE("The new optimizers update 16-bit parameters through float32 state") {
  const Device dev = device_under_test();
  const Trajectory& ref = torch_reference().at("NAdam");
  for (bool master : {false, true}) {
    INFO("master_weights " << master);
    Tensor p = make_param(dev, kBFloat16);
    opt::NAdam o({p}, opt::NAdamOptions(0.1).master_weights(master));
    follow(o, p, ref, 0, ref.size(), 0.05);
    CHECK(o.state(p)->buffers.at("exp_avg").dtype() == kFloat32);
    CHECK(p.dtype() == kBFloat16);
  }
}

TEST_CASE("The new optimizers reject invalid options with ValueError naming them") {
  Tensor p = make_param(device_under_test(), kFloat32);
  CHECK_THROWS_AS(opt::Adamax({p}, opt::AdamaxOptions(-1.0)), ValueError);
  CHECK_THROWS_AS(opt::Adamax({p}, opt::AdamaxOptions().betas(1.0, 0.9)), ValueError);
  CHECK_THROWS_AS(opt::NAdam({p}, opt::NAdamOptions().momentum_decay(-0.1)), ValueError);
  CHECK_THROWS_AS(opt::RAdam({p}, opt::RAdamOptions().eps(-1e-8)), ValueError);
  CHECK_THROWS_AS(opt::Adadelta({p}, opt::AdadeltaOptions().rho(1.5)), ValueError);
  CHECK_THROWS_AS(opt::ASGD({p}, opt::ASGDOptions().weight_decay(-1)), ValueError);
  CHECK_THROWS_AS(opt::Rprop({p}, opt::RpropOptions().etas({1.2, 0.5})), ValueError);
  CHECK_THROWS_AS(opt::Rprop({p}, opt::RpropOptions().step_sizes({1.0, 0.1})), ValueError);
  CHECK_THROWS_WITH(opt::Rprop({p}, opt::RpropOptions().etas({0.5, 0.9})), Catch::Contains("etaminus < 1 < etaplus"));
  CHECK_THROWS_WITH(opt::NAdam({p}, opt::NAdamOptions(std::nan(""))), Catch::Contains("lr"));
  // A scalar state entry must hold one value.
  opt::ASGD o({p}, opt::ASGDOptions());
  set_grad(p);
  o.step();
  opt::StateDict d = o.state_dict();
  for (auto& [k, v] : d)
    if (k == "state.0.eta") v = zeros({2}, TensorOptions(kFloat64));
  CHECK_THROWS_AS(o.load_state_dict(d), ShapeError);
}

namespace {

// LBFGS as optimizers_more_torch.py's lbfgs(): 3 steps of max_iter 4, history 3.
std::unique_ptr<opt::LBFGS> make_lbfgs(const Tensor& p, bool wolfe) {
  opt::LBFGSOptions o(wolfe ? 1.0 : 0.5);
  o.max_iter(4).history_size(3);
  if (wolfe) o.line_search_fn("strong_wolfe");
  return std::make_unique<opt::LBFGS>(std::vector<Tensor>{p}, o);
}

opt::LossClosure closure_for(opt::Optimizer& o, const Tensor& p) {
  return [&o, p] {
    o.zero_grad();
    Tensor loss = loss_of(p);
    loss.backward();
    return loss;
  };
}

}  // namespace

TEST_CASE("LBFGS follows PyTorch's trajectory, with and without the strong-Wolfe search") {
  const Device dev = device_under_test();
  for (bool wolfe : {false, true}) {
    const Trajectory& ref = torch_reference().at(wolfe ? "LBFGS_wolfe" : "LBFGS");
    Tensor p = make_param(dev, kFloat64);
    auto o = make_lbfgs(p, wolfe);
    for (size_t k = 0; k < ref.size(); ++k) {
      Tensor first = o->step(closure_for(*o, p));
      INFO("strong_wolfe " << wolfe << ", step " << k + 1);
      CHECK(first.numel() == 1);
      CHECK(max_diff(values(p), ref[k]) <= 1e-10);
    }
    // Resumed from state_dict after 2 steps, a fresh LBFGS takes the same third step.
    Tensor q = make_param(dev, kFloat64);
    auto a = make_lbfgs(q, wolfe);
    for (int k = 0; k < 2; ++k) a->step(closure_for(*a, q));
    Tensor r = q.detach().clone();
    r.requires_grad_();
    auto b = make_lbfgs(r, wolfe);
    b->load_state_dict(a->state_dict());
    b->step(closure_for(*b, r));
    CHECK(max_diff(values(r), ref[2]) <= 1e-10);
  }
}

TEST_CASE("LBFGS minimises the Rosenbrock function") {
  const Device dev = device_under_test();
  for (bool wolfe : {false, true}) {
    INFO("strong_wolfe " << wolfe);
    Tensor x = from_vector(std::vector<double>{-1.5, 2.0}, Shape{2}, dev);
    x.requires_grad_();
    opt::LBFGSOptions o(wolfe ? 1.0 : 0.1);
    o.max_iter(50).history_size(10).tolerance_grad(1e-12).tolerance_change(1e-14);
    if (wolfe) o.line_search_fn("strong_wolfe");
    opt::LBFGS lbfgs({x}, o);
    auto closure = [&] {
      lbfgs.zero_grad();
      Tensor a = x.narrow(0, 0, 1), b = x.narrow(0, 1, 1);
      Tensor loss = ((1.0 - a) * (1.0 - a) + (b - a * a) * (b - a * a) * 100.0).sum();
      loss.backward();
      return loss;
    };
    for (int s = 0; s < (wolfe ? 4 : 40); ++s) lbfgs.step(closure);
    std::vector<double> v = values(x);
    CHECK(v[0] == Approx(1.0).margin(1e-4));
    CHECK(v[1] == Approx(1.0).margin(1e-4));
  }
}

TEST_CASE("LBFGS checks its options, its closure and its groups") {
  Tensor p = make_param(device_under_test(), kFloat64), q = make_param(device_under_test(), kFloat64);
  CHECK_THROWS_AS(opt::LBFGSOptions().line_search_fn("backtracking"), ValueError);
  CHECK_THROWS_AS(opt::LBFGS({p}, opt::LBFGSOptions(-1.0)), ValueError);
  CHECK_THROWS_AS(opt::LBFGS({p}, opt::LBFGSOptions().history_size(0)), ValueError);
  CHECK_THROWS_WITH(opt::LBFGS(std::vector<opt::ParamGroup>{opt::ParamGroup({p}), opt::ParamGroup({q})}),
                    Catch::Contains("one parameter group"));
  opt::LBFGS o({p});
  CHECK_THROWS_AS(o.step(opt::LossClosure()), ValueError);
  CHECK_THROWS_WITH(o.step([&] { return zeros({2}, TensorOptions(kFloat64)); }), Catch::Contains("one-element"));
  opt::Optimizer& base = o;
  set_grad(p);
  CHECK_THROWS_WITH(base.step(), Catch::Contains("step(closure)"));
}

TEST_CASE("parameters_to_vector and vector_to_parameters round trip") {
  const Device dev = device_under_test();
  Tensor a = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape{2, 3}, dev), b = from_vector(std::vector<double>{7, 8}, Shape{2}, dev);
  a.requires_grad_();
  b.requires_grad_();
  Tensor v = nn::utils::parameters_to_vector({a, b});
  CHECK(v.sizes() == Shape{8});
  CHECK(values(v) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  nn::utils::vector_to_parameters(v * 2.0, {a, b});
  CHECK(values(a) == std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK(values(b) == std::vector<double>{14, 16});
  CHECK(a.is_leaf());
  CHECK_THROWS_AS(nn::utils::vector_to_parameters(v.narrow(0, 0, 7), {a, b}), ShapeError);
  CHECK_THROWS_AS(nn::utils::parameters_to_vector({}), ValueError);
}
